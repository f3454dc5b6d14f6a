// common_following_end: where a page of common_following.cypher that came short stopped: the
// id of the $scan-th user $small follows after $after in id order (through the
// follows_src_dst index), or no row when it follows fewer (the list ended within the page).
// Cost: $scan index entries at most.
// Params: $small (the walked user's id), $after, $scan. Returns: at most one row: id.
MATCH ()-[r:FOLLOWS]->()
USING INDEX r:FOLLOWS(src, dst)
WHERE r.src = $small AND r.dst > $after
WITH r
ORDER BY r.src, r.dst
SKIP $scan - 1
LIMIT 1
RETURN r.dst AS id
