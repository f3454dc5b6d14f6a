// common_followers: active users who follow both $a and $b, in id order after $after, with
// their number: exact, or a lower bound for users with very many followers.
// Walks the followers of whichever of the two has fewer (degrees are O(1) in Neo4j) in id
// order, through the follows_dst_src index (dst, src), and tests each for an edge to the
// other user with one seek in the same index: every step is O(log edges), whatever either
// user's number of followers.
// Bounds: at most $scan followers of the smaller side are examined for the total (exact when
// that side has at most $scan followers, else the common followers among the first $scan:
// a lower bound), and at most $scan after $after for the page, which stops once it holds
// $limit ids (its seek is read in index order and stopped by LIMIT). A page that examined
// $scan followers without filling ends early: the caller finds where it stopped with
// common_followers_end.cypher and carries on from there.
// Params: $a, $b, $after ('' to start), $limit, $scan.
// Returns: no row when either user is unknown; else one row: total, exact (the total is
// exact), page (at most $limit ids), small (the walked user's id), windowed (the walked side
// has more than $scan followers: a short page may not be the end).
MATCH (a:User {id: $a})
MATCH (b:User {id: $b})
WITH a, b, COUNT { (a)<-[:FOLLOWS]-() } AS na, COUNT { (b)<-[:FOLLOWS]-() } AS nb
WITH CASE WHEN na <= nb THEN [a.id, b.id] ELSE [b.id, a.id] END AS pair,
     CASE WHEN na <= nb THEN na ELSE nb END AS smaller
WITH pair[0] AS small, pair[1] AS big, smaller
CALL (small, big) {
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, src)
  WHERE r.dst = small AND r.src IS NOT NULL
  WITH f, r.src AS id
  LIMIT $scan
  WITH f, id
  WHERE NOT f:Inactive
    AND EXISTS {
      MATCH ()-[q:FOLLOWS]->()
      USING INDEX q:FOLLOWS(dst, src)
      WHERE q.dst = big AND q.src = id
    }
  RETURN count(*) AS total
}
CALL (small, big) {
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, src)
  WHERE r.dst = small AND r.src > $after
  WITH f, r
  ORDER BY r.dst, r.src
  LIMIT $scan
  WITH f, r.src AS id
  WHERE NOT f:Inactive
    AND EXISTS {
      MATCH ()-[q:FOLLOWS]->()
      USING INDEX q:FOLLOWS(dst, src)
      WHERE q.dst = big AND q.src = id
    }
  WITH id
  LIMIT $limit
  RETURN collect(id) AS page
}
RETURN total, smaller <= $scan AS exact, page, small, smaller > $scan AS windowed
