// following_count: how many $id follows (the degree store: O(1)); 0 for an unknown user. Asked
// only for a user with too few candidates, to know whether expanding more of its followings
// can find more (it cannot when all of them were expanded already).
// Params: $id. Returns: following.
OPTIONAL MATCH (u:User {id: $id})
RETURN CASE WHEN u IS NULL THEN 0 ELSE COUNT { (u)-[:FOLLOWS]->() } END AS following
