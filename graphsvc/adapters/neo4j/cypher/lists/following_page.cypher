// following_page: newest-first keyset page of whom $id follows, strictly after ($since, $after),
// leaving out inactive (suspended, spam) users as the mirror's pages do.
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
MATCH (:User {id: $id})-[r:FOLLOWS]->(f:User)
WHERE (r.since < $since OR (r.since = $since AND f.id < $after)) AND NOT f:Inactive
WITH r.since AS since, f.id AS id
ORDER BY since DESC, id DESC
LIMIT $limit
RETURN since, id
