// erase_end: delete the erased user's node once no relationship is left (a follow that
// raced the start of the erasure may still have landed: then the batches run again).
// Params: $id. Returns whether the node is gone (also true when it was already gone).
OPTIONAL MATCH (x:User {id: $id})
WITH x, x IS NOT NULL AND EXISTS { (x)--() } AS busy
FOREACH (_ IN CASE WHEN x IS NOT NULL AND NOT busy THEN [1] ELSE [] END | DELETE x)
RETURN NOT busy AS done
