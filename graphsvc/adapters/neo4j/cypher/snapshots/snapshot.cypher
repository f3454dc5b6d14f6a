// snapshot: what the mirror needs to (re)build users, in one round trip for many users.
// `at` is Neo4j's clock read before anything else: every change committed before `at` is
// reflected in the counts and lists, so between two snapshots of a user the later `at` wins.
// A limit of 0 skips that list without reading it (counts-only reads use counts.cypher).
// Unknown users give no row. The counts are those of counts.cypher.
// Params: $ids (list of user ids), $followers_limit, $following_limit.
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at
CALL (u) {
  WITH u WHERE $followers_limit > 0
  MATCH (u)<-[r:FOLLOWS]-(f:User)
  WITH r.since AS since, f.id AS id
  ORDER BY since DESC, id DESC
  LIMIT $followers_limit
  RETURN collect([since, id]) AS followers
}
CALL (u) {
  WITH u WHERE $following_limit > 0
  MATCH (u)-[r:FOLLOWS]->(f:User)
  WITH r.since AS since, f.id AS id
  ORDER BY since DESC, id DESC
  LIMIT $following_limit
  RETURN collect([since, id]) AS following
}
RETURN u.id AS id, at, u:Inactive AS inactive,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       COUNT { (u)<-[:FOLLOWS]-() } - coalesce(u.xr, 0) AS followers_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive } AS following_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) } }
         AS friends,
       followers, following
