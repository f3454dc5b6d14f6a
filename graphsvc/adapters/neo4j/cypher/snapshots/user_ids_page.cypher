// user_ids_page: every user id in id order, a page at a time (index-backed by the constraint).
// Params: $after (user id, '' to start), $limit.
MATCH (u:User)
WHERE u.id > $after
RETURN u.id AS id
ORDER BY id
LIMIT $limit
