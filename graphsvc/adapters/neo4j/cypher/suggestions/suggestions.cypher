// suggestions: people $id may know, scored, with the reasons.
// Candidates: friends of friends through $id's follows, and followers $id does not follow.
// Bounded work: at most $intermediaries of $id's followings are expanded (closest by affinity
// first, then the least followed: their paths weigh most), and at most $edges edges are read
// from each, and from $id's
// followers, so the cost does not grow with anyone's degree (degrees are O(1) to read).
// A path through intermediary m weighs (1 + $alpha * affinity(me, m)) / degree(m)^$beta, or
// / log(2 + degree(m)) when $beta is 0: a close friend counts more, a celebrity (huge degree)
// little (resource allocation, or Adamic-Adar, style).
// A follower not followed back adds $follower_weight x (1 + $alpha * affinity(me, follower)).
// Excluded: $id, anyone $id follows, blocks either way, inactive users, users being erased,
// dismissed users.
// Params: $id, $now, $h, $intermediaries, $edges, $alpha, $beta, $follower_weight, $limit.
MATCH (me:User {id: $id})
CALL (me) {
  CALL (me) {
    MATCH (me)-[r:FOLLOWS]->(m:User)
    WHERE NOT m:Inactive
    WITH m, r.since AS since,
         COLLECT { MATCH (me)-[i:INTERACTS]-(m) RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) }
           AS parts,
         COUNT { (m)<-[:FOLLOWS]-() } + COUNT { (m)-[:FOLLOWS]->() } AS degree
    WITH m, since, degree, reduce(total = 0.0, part IN parts | total + part) AS affinity
    ORDER BY affinity DESC, degree, since DESC, m.id
    LIMIT $intermediaries
    RETURN m, affinity, degree
  }
  CALL (m) {
    MATCH (m)-[:FOLLOWS]->(c:User)
    RETURN c
    LIMIT $edges
  }
  RETURN c, m.id AS via, affinity,
         (1.0 + $alpha * affinity)
           / CASE WHEN $beta > 0 THEN toFloat(degree) ^ $beta ELSE log(2.0 + degree) END
           AS weight,
         'friends_of_friends' AS source
  UNION ALL
  MATCH (me)<-[:FOLLOWS]-(c:User)
  WITH me, c
  LIMIT $edges
  WITH c, COLLECT { MATCH (me)-[i:INTERACTS]-(c) RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) }
            AS parts
  WITH c, reduce(total = 0.0, part IN parts | total + part) AS affinity
  RETURN c, null AS via, affinity, $follower_weight * (1.0 + $alpha * affinity) AS weight,
         'follows_you' AS source
}
WITH me, c, sum(weight) AS score, collect(DISTINCT source) AS sources,
     collect(CASE WHEN via IS NOT NULL THEN {id: via, affinity: affinity} END) AS paths
// excluded once per candidate, after the paths are summed
WHERE c <> me AND NOT c:Inactive AND NOT c:Erasing
  AND NOT EXISTS { (me)-[:FOLLOWS]->(c) }
  AND NOT EXISTS { (me)-[:BLOCKS]-(c) }
  AND NOT EXISTS { (me)-[:DISMISSED]->(c) }
WITH c, score, sources, paths
ORDER BY score DESC, c.id
LIMIT $limit
CALL (paths) {
  UNWIND paths AS path
  WITH path
  ORDER BY path.affinity DESC, path.id
  LIMIT 3
  RETURN collect(path.id) AS via
}
RETURN c.id AS id, score, size(paths) AS mutual, via, sources
