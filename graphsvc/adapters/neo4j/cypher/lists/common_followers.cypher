// common_followers: active users who follow both $a and $b, in id order after $after.
// Starts from whichever of the two has fewer followers and tests each of those followers for
// an edge to the other (an expand-into from the follower's side): O(followers of the smaller
// side x their followings), never a scan of the larger side.
// Params: $a, $b, $after ('' to start), $limit. One row: total and the page's ids.
OPTIONAL MATCH (a:User {id: $a})
OPTIONAL MATCH (b:User {id: $b})
WITH CASE WHEN a IS NULL OR b IS NULL THEN []
          WHEN COUNT { (a)<-[:FOLLOWS]-() } <= COUNT { (b)<-[:FOLLOWS]-() } THEN [a, b]
          ELSE [b, a] END AS pair
WITH pair[0] AS small, pair[1] AS big
OPTIONAL MATCH (small)<-[:FOLLOWS]-(f:User)
WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(big) }
WITH f.id AS id
ORDER BY id
WITH collect(id) AS ids
RETURN size(ids) AS total, [i IN ids WHERE i > $after][..$limit] AS page
