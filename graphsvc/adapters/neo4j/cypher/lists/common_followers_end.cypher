// common_followers_end: where a page of common_followers.cypher that came short stopped: the
// id of the $scan-th follower of $small after $after in id order (through the
// follows_dst_src index), or no row when fewer follow (the list ended within the page).
// Cost: $scan index entries at most.
// Params: $small (the walked user's id), $after, $scan. Returns: at most one row: id.
MATCH ()-[r:FOLLOWS]->()
USING INDEX r:FOLLOWS(dst, src)
WHERE r.dst = $small AND r.src > $after
WITH r
ORDER BY r.dst, r.src
SKIP $scan - 1
LIMIT 1
RETURN r.src AS id
