// common_following: active users that both $a and $b follow, in id order after $after, with
// their number: exact, or a lower bound for users who follow very many.
// Walks the followings of whichever of the two follows fewer (degrees are O(1) in Neo4j) in
// id order, through the follows_src_dst index (src, dst), and tests each for an edge from the
// other user with one seek in the same index: every step is O(log edges).
// Bounds: as in common_followers.cypher: at most $scan followings of the smaller side are
// examined for the total (exact when that side follows at most $scan users, else a lower
// bound) and at most $scan after $after for the page, which stops once it holds $limit ids;
// a short page of a windowed walk carries on where common_following_end.cypher says.
// Params: $a, $b, $after ('' to start), $limit, $scan.
// Returns: no row when either user is unknown; else one row: total, exact, page, small,
// windowed (as in common_followers.cypher).
MATCH (a:User {id: $a})
MATCH (b:User {id: $b})
WITH a, b, COUNT { (a)-[:FOLLOWS]->() } AS na, COUNT { (b)-[:FOLLOWS]->() } AS nb
WITH CASE WHEN na <= nb THEN [a.id, b.id] ELSE [b.id, a.id] END AS pair,
     CASE WHEN na <= nb THEN na ELSE nb END AS smaller
WITH pair[0] AS small, pair[1] AS big, smaller
CALL (small, big) {
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, dst)
  WHERE r.src = small AND r.dst IS NOT NULL
  WITH c, r.dst AS id
  LIMIT $scan
  WITH c, id
  WHERE NOT c:Inactive
    AND EXISTS {
      MATCH ()-[q:FOLLOWS]->()
      USING INDEX q:FOLLOWS(src, dst)
      WHERE q.src = big AND q.dst = id
    }
  RETURN count(*) AS total
}
CALL (small, big) {
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, dst)
  WHERE r.src = small AND r.dst > $after
  WITH c, r
  ORDER BY r.src, r.dst
  LIMIT $scan
  WITH c, r.dst AS id
  WHERE NOT c:Inactive
    AND EXISTS {
      MATCH ()-[q:FOLLOWS]->()
      USING INDEX q:FOLLOWS(src, dst)
      WHERE q.src = big AND q.dst = id
    }
  WITH id
  LIMIT $limit
  RETURN collect(id) AS page
}
RETURN total, smaller <= $scan AS exact, page, small, smaller > $scan AS windowed
