// erase_pending: the removals of an erasure's last batch, which its mirror may have missed.
// Params: $id. No row when the user is not being erased.
MATCH (x:User:Erasing {id: $id})
RETURN coalesce(x.pending, []) AS pending
