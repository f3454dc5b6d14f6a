// active_users: every active user following at least $min others, by id (for the random
// holdout of `graphsvc train-pymk`; O(users), offline).
// Params: $min. Returns: id.
MATCH (u:User)
WHERE NOT u:Inactive AND NOT u:Erasing AND COUNT { (u)-[:FOLLOWS]->() } >= $min
RETURN u.id AS id
ORDER BY id
