// three_hop: people three follows away (me -> m -> w -> c), for a user whose two-hop
// neighbourhood is thin (the service asks only when candidates.cypher found fewer than
// SUGGEST_THIN candidates). Bounded: at most $intermediaries of my follows, $edges of theirs
// each, the $items two-hop users w reached by most paths, and $edges follows of each w, read.
// A path weighs 1 / (degree(m) * degree(w)): resource allocation over two steps.
// Training: as candidates.cypher ($before hides newer edges, $hidden my edges with those ids).
// Excluded: as candidates.cypher.
// Params: $id, $now, $fresh_h, $before, $hidden, $intermediaries, $edges, $items, $candidates.
// Returns per candidate: id, hop3 (the summed path weights), hop3_paths, and the candidate's
//         followers, follows and activity (as candidates.cypher).
MATCH (me:User {id: $id})
CALL (me) {
  MATCH (me)-[r:FOLLOWS]->(m:User)
  WHERE ($before IS NULL OR r.since < $before) AND NOT m.id IN $hidden
  WITH m LIMIT $intermediaries
  CALL (me, m) {
    MATCH (m)-[r:FOLLOWS]->(w:User)
    WHERE w <> me AND ($before IS NULL OR r.since < $before)
    RETURN w LIMIT $edges
  }
  WITH w, sum(1.0 / (COUNT { (m)<-[:FOLLOWS]-() } + COUNT { (m)-[:FOLLOWS]->() })) AS reach
  ORDER BY reach DESC, w.id
  LIMIT $items
  RETURN w, reach / (COUNT { (w)<-[:FOLLOWS]-() } + COUNT { (w)-[:FOLLOWS]->() }) AS share
}
CALL (me, w) {
  MATCH (w)-[r:FOLLOWS]->(c:User)
  WHERE c <> me AND ($before IS NULL OR r.since < $before)
  RETURN c LIMIT $edges
}
WITH me, c, sum(share) AS hop3, count(*) AS hop3_paths
// best first, the exclusions checked lazily until $candidates pass (as in candidates.cypher)
ORDER BY hop3 DESC, c.id
WITH * WHERE NOT c:Inactive AND NOT c:Erasing
  AND (c.id IN $hidden OR NOT EXISTS {
    (me)-[f:FOLLOWS]->(c) WHERE $before IS NULL OR f.since < $before })
  AND NOT EXISTS { (me)-[:BLOCKS]-(c) }
  AND NOT EXISTS { (me)-[:DISMISSED]->(c) }
LIMIT $candidates
// degrees and last activity as of $before when training (one CASE branch is evaluated)
WITH c, hop3, hop3_paths,
     CASE WHEN $before IS NULL THEN COUNT { (c)<-[:FOLLOWS]-() }
          ELSE COUNT { (c)<-[r:FOLLOWS]-() WHERE r.since < $before } END AS followers,
     CASE WHEN $before IS NULL THEN COUNT { (c)-[:FOLLOWS]->() }
          ELSE COUNT { (c)-[r:FOLLOWS]->() WHERE r.since < $before } END AS follows,
     CASE WHEN $before IS NULL THEN c.clk
          ELSE COLLECT { MATCH (c)-[r:FOLLOWS]->() WHERE r.since < $before
                         RETURN r.since ORDER BY r.since DESC LIMIT 1 }[0] END AS active
RETURN c.id AS id, hop3, hop3_paths, followers, follows,
       CASE WHEN active IS NULL THEN 0.0 ELSE 2.0 ^ (toFloat(active - $now) / $fresh_h) END
         AS active
