// relationships: how one user relates to up to a few hundred others, in one round trip.
// Each check is a single-edge existence test between two known nodes (expand-into), which
// Neo4j runs from the side with fewer relationships: bounded by the smaller degree, never by
// a celebrity's follower count. Unknown ids (and an unknown $id) give all false.
// One row of [id, following, followed_by, blocking, blocked_by] lists: a hundred rows cost the
// Python driver more than the query costs Neo4j.
// Params: $id, $ids.
OPTIONAL MATCH (me:User {id: $id})
UNWIND $ids AS oid
OPTIONAL MATCH (o:User {id: oid})
WITH me, oid, o, me IS NOT NULL AND o IS NOT NULL AS both
RETURN collect([
  oid,
  both AND EXISTS { (me)-[:FOLLOWS]->(o) },
  both AND EXISTS { (o)-[:FOLLOWS]->(me) },
  both AND EXISTS { (me)-[:BLOCKS]->(o) },
  both AND EXISTS { (o)-[:BLOCKS]->(me) }
]) AS rows
