// inactive_users: every non-active user with its clock (to rebuild the mirror's status set).
// Params: $after (user id, '' to start), $limit.
MATCH (u:User:Inactive)
WHERE u.id > $after
RETURN u.id AS id, u.clk AS version
ORDER BY id
LIMIT $limit
