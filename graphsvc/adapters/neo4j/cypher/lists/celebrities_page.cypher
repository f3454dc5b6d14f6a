// celebrities_page: the active users $id follows that have at least $threshold followers,
// newest follow first, keyset-paged (what a pull-model feed fans in from).
// Reads $id's followings (bounded by MAX_FOLLOWING); each degree is O(1) in Neo4j.
// Params: $id, $since, $after, $limit (as in following_page.cypher), $threshold.
MATCH (:User {id: $id})-[r:FOLLOWS]->(c:User)
WHERE (r.since < $since OR (r.since = $since AND c.id < $after))
  AND NOT c:Inactive AND COUNT { (c)<-[:FOLLOWS]-() } >= $threshold
WITH r.since AS since, c.id AS id
ORDER BY since DESC, id DESC
LIMIT $limit
RETURN since, id
