// snapshot: what the mirror needs to (re)build users, in one round trip for many users.
// clk is read before the edges: under read-committed the edges can only be newer than clk,
// never older, so clk is a safe lower bound for the version the snapshot reflects.
// A limit of 0 skips that list (a counts-only snapshot). Unknown users give no row.
// Params: $ids (list of user ids), $followers_limit, $following_limit.
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, coalesce(u.clk, 0) AS clk
CALL (u) {
  MATCH (u)<-[r:FOLLOWS]-(f:User)
  WITH r.since AS since, f.id AS id
  ORDER BY since DESC, id DESC
  LIMIT $followers_limit
  RETURN collect([since, id]) AS followers
}
CALL (u) {
  MATCH (u)-[r:FOLLOWS]->(f:User)
  WITH r.since AS since, f.id AS id
  ORDER BY since DESC, id DESC
  LIMIT $following_limit
  RETURN collect([since, id]) AS following
}
RETURN u.id AS id, clk,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       followers, following
