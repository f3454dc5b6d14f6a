// common_followers_join: active users who follow both $a and $b, in id order after $after.
// Reads both follower lists once and joins them on the follower (a hash join): O(followers of
// a + followers of b). The service picks it when both have similar follower counts (measured:
// 215 ms against 454 ms for common_followers.cypher at 110,000 followers each); when one side
// is much smaller, common_followers.cypher, which never reads the bigger side, is cheaper.
// Params: $a, $b, $after ('' to start), $limit. One row: total and the page's ids.
OPTIONAL MATCH (a:User {id: $a})
OPTIONAL MATCH (b:User {id: $b})
OPTIONAL MATCH (a)<-[:FOLLOWS]-(f:User)-[:FOLLOWS]->(b)
USING JOIN ON f
WHERE NOT f:Inactive
WITH f.id AS id
ORDER BY id
WITH collect(id) AS ids
RETURN size(ids) AS total, [i IN ids WHERE i > $after][..$limit] AS page
