// friends_page: active mutual follows of $id, newest follow (by $id) first, keyset-paged.
// Reads $id's followings (bounded by MAX_FOLLOWING) and tests each for the reverse edge.
// Params: $id, $since, $after, $limit (as in following_page.cypher).
MATCH (u:User {id: $id})-[r:FOLLOWS]->(f:User)
WHERE (r.since < $since OR (r.since = $since AND f.id < $after))
  AND NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) }
WITH r.since AS since, f.id AS id
ORDER BY since DESC, id DESC
LIMIT $limit
RETURN since, id
