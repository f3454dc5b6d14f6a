// naive_suggestions: the benchmark's baseline, what a first attempt at "people you may know"
// looks like: count every follow path of length 2 or 3. Its work grows with the degrees along
// the paths (a celebrity on the way multiplies it); the benchmark runs it with a timeout.
// Params: $id.
MATCH (me:User {id: $id})-[:FOLLOWS*2..3]->(p:User)
WHERE p <> me AND NOT (me)-[:FOLLOWS]->(p)
RETURN p.id AS id, count(*) AS paths
ORDER BY paths DESC
LIMIT 10
