// familiar_followers: active users $viewer follows who follow $target, the viewer's newest
// follows first ("Followed by A, B and 12 others you follow").
// Reads the viewer's followings (bounded by MAX_FOLLOWING) and tests each for an edge to
// $target (expand-into from the follower's side: a celebrity target costs nothing extra).
// Users in a block with the viewer are left out (a block removes follows, so this guards).
// Params: $viewer, $target, $limit. One row: total and the first $limit ids.
OPTIONAL MATCH (v:User {id: $viewer})
OPTIONAL MATCH (t:User {id: $target})
OPTIONAL MATCH (v)-[r:FOLLOWS]->(f:User)
WHERE t IS NOT NULL AND f <> t AND NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(t) }
  AND NOT EXISTS { (v)-[:BLOCKS]-(f) }
WITH r.since AS since, f.id AS id
ORDER BY since DESC, id DESC
WITH collect(id) AS ids
RETURN size(ids) AS total, ids[..$limit] AS page
