// counts: exact counts of many users. `at` is Neo4j's clock read before the counts (see
// snapshot.cypher). Unknown users: no row.
// Totals come from Neo4j's degree store (no relationship is read). Active followers subtract
// `xr`, the inactive followers counted by every write of an inactive follower and by status
// fan-outs: O(1). Active followings and friends (active mutual follows) read the user's
// followings: O(following), which the MAX_FOLLOWING limit bounds.
// Params: $ids (list of user ids).
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at
RETURN u.id AS id, at,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       COUNT { (u)<-[:FOLLOWS]-() } - coalesce(u.xr, 0) AS followers_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive } AS following_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) } }
         AS friends
