// counts: exact counts of many users. `at` is Neo4j's clock read before the counts (see
// snapshot.cypher). Unknown users: no row.
// Totals come from Neo4j's degree store (no relationship is read), each read once: a dense
// node's degree costs about a millisecond at 30,000 followers. Active followers subtract `xr`,
// the inactive followers counted by every write of an inactive follower and by status
// fan-outs: O(1). Active followings and friends (active mutual follows) come from one pass over
// the user's followings: O(following), which the MAX_FOLLOWING limit bounds.
// Params: $ids (list of user ids).
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at,
     COUNT { (u)<-[:FOLLOWS]-() } AS followers,
     [(u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive | EXISTS { (f)-[:FOLLOWS]->(u) }] AS active
RETURN u.id AS id, at,
       followers AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       followers - coalesce(u.xr, 0) AS followers_active,
       size(active) AS following_active,
       size([mutual IN active WHERE mutual]) AS friends
