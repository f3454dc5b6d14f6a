// common_following: active users that both $a and $b follow, in id order after $after.
// Reads $a's followings (bounded by MAX_FOLLOWING) and tests each for an edge from $b.
// Params: $a, $b, $after ('' to start), $limit. One row: total and the page's ids.
OPTIONAL MATCH (a:User {id: $a})
OPTIONAL MATCH (b:User {id: $b})
OPTIONAL MATCH (a)-[:FOLLOWS]->(c:User)
WHERE b IS NOT NULL AND NOT c:Inactive AND EXISTS { (b)-[:FOLLOWS]->(c) }
WITH c.id AS id
ORDER BY id
WITH collect(id) AS ids
RETURN size(ids) AS total, [i IN ids WHERE i > $after][..$limit] AS page
