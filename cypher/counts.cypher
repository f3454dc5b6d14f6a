// counts: exact counts of many users, from Neo4j's degree store (no relationship is read).
// `at` is Neo4j's clock read before the counts (see snapshot.cypher). Unknown users: no row.
// Params: $ids (list of user ids).
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
RETURN u.id AS id, now.epochSeconds * 1000000 + now.microsecond AS at,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count
