// followings_of: whom each of $ids follows (for the random holdout of `graphsvc train-pymk`,
// which hides a seeded share of them). Offline only: reads every following of each user.
// Params: $ids. Returns: id, following (ids).
UNWIND $ids AS uid
MATCH (u:User {id: uid})
RETURN uid AS id, COLLECT { MATCH (u)-[:FOLLOWS]->(v:User) RETURN v.id } AS following
