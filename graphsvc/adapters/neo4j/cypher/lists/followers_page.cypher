// followers_page: newest-first keyset page of who follows $id, strictly after ($since, $after),
// leaving out inactive (suspended, spam) users as the mirror's pages do.
// Serves pages past the mirror's capped hot list (and reads when Redis cannot help).
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
MATCH (:User {id: $id})<-[r:FOLLOWS]-(f:User)
WHERE (r.since < $since OR (r.since = $since AND f.id < $after)) AND NOT f:Inactive
WITH r.since AS since, f.id AS id
ORDER BY since DESC, id DESC
LIMIT $limit
RETURN since, id
