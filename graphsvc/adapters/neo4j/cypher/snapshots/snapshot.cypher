// snapshot: what the mirror needs to (re)build users, in one round trip for many users.
// `at` is Neo4j's clock read before anything else: every change committed before `at` is
// reflected in the counts and lists, so between two snapshots of a user the later `at` wins.
// A limit of 0 skips that list without reading it (counts-only reads use counts.cypher).
// Unknown users give no row. The counts are those of counts.cypher.
// Cost and memory: the newest followers are a seek in the follows_dst_since index (dst, since,
// src), read newest first and stopped at $followers_limit: the work is the entries read, not
// a celebrity's millions (the follower's id is the edge's src). The followings are sorted
// whole and then sliced:
// two Tops of 5,000 or more in one query made Neo4j 5.26 exceed its 2.8 GiB transaction
// memory for a user with 12,000 followers and 12,000 followings (either Top alone needs next
// to nothing), and MAX_FOLLOWING bounds what the sort reads for every user a live follow made.
// Params: $ids (list of user ids), $followers_limit, $following_limit.
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at
RETURN u.id AS id, at, u:Inactive AS inactive,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       COUNT { (u)<-[:FOLLOWS]-() } - coalesce(u.xr, 0) AS followers_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive } AS following_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) } }
         AS friends,
       COLLECT {
         MATCH ()-[r:FOLLOWS]->()
         USING INDEX r:FOLLOWS(dst, since, src)
         WHERE $followers_limit > 0 AND r.dst = u.id AND r.since IS NOT NULL
           AND r.src IS NOT NULL
         WITH r
         ORDER BY r.dst DESC, r.since DESC, r.src DESC
         LIMIT $followers_limit
         RETURN [r.since, r.src]
       } AS followers,
       COLLECT {
         MATCH (u)-[r:FOLLOWS]->(f:User) WHERE $following_limit > 0
         WITH r.since AS since, f.id AS id
         ORDER BY since DESC, id DESC
         RETURN [since, id]
       }[..$following_limit] AS following
