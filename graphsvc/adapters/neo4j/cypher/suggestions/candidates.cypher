// candidates: the people $id may know, from every source, with the features the ranker scores
// (the ranker runs in the API process: services/ranker.py).
// Sources, each bounded whatever the degrees (degrees are O(1) reads of the degree store):
//   friends_of_friends  me -> m -> c: at most $intermediaries of my followings are expanded
//                       (closest by affinity first, then the least followed: their paths say
//                       most); from each, at most $scan edges are read, and the people I
//                       already follow are excluded once per candidate after the paths are
//                       summed (so a dense community whose members I mostly follow still
//                       yields its few new names, with no per-edge existence check).
//   follows_you         my followers I do not follow back (at most $scan read, $edges kept).
//   co_followers        me -> x <- w -> c (SALSA, "who to follow"): my $items least followed
//                       follows x; their followers w (at most $edges each) weighed by the
//                       shared x, each x damped by its followers; the $cofollowers most similar
//                       w; what they follow (at most $edges each), damped by w's follows.
// Training: edges made at or after $before (µs) are invisible, and my edges with the ids in
// $hidden are invisible either way, so the held-out edges are neither paths nor exclusions.
// The candidate's degrees and last activity are counted as of $before too (a look-ahead there
// would leak the held-out edge itself); intermediaries' damping degrees count every edge.
// Serving passes $before = null and $hidden = [].
// Excluded: $id, anyone $id follows, blocks either way, inactive or erasing users, dismissed.
// Params: $id, $now, $h (affinity half-life, µs), $fresh_h (path freshness half-life, µs),
//         $before, $hidden, $intermediaries, $edges, $scan, $items, $cofollowers, $candidates.
// Returns one record, rows: per candidate [id, sources, the features..., vias] (the order of
//         CANDIDATE_COLUMNS in adapters/neo4j/suggestions.py; vias: every friend-of-friend
//         intermediary with its affinity, of which the service names the 3 closest).
MATCH (me:User {id: $id})
CALL (me) {
  CALL (me) {
    MATCH (me)-[r:FOLLOWS]->(m:User)
    WHERE NOT m:Inactive AND ($before IS NULL OR r.since < $before) AND NOT m.id IN $hidden
    WITH m, r.since AS since,
         COLLECT { MATCH (me)-[i:INTERACTS]-(m) WHERE $before IS NULL OR i.at < $before
                   RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) } AS parts,
         COUNT { (m)<-[:FOLLOWS]-() } + COUNT { (m)-[:FOLLOWS]->() } AS degree
    WITH m, since, degree, reduce(total = 0.0, part IN parts | total + part) AS affinity
    ORDER BY affinity DESC, degree, since DESC, m.id
    LIMIT $intermediaries
    RETURN m, affinity, degree
  }
  CALL (me, m) {
    MATCH (m)-[r:FOLLOWS]->(c:User)
    WHERE c <> me AND ($before IS NULL OR r.since < $before)
    RETURN c, r.since AS since
    LIMIT $scan
  }
  RETURN c, 'friends_of_friends' AS source, m.id AS via, affinity, 1.0 / degree AS ra,
         1.0 / log(2.0 + degree) AS aa, 2.0 ^ (toFloat(since - $now) / $fresh_h) AS fresh,
         0.0 AS cof
  UNION ALL
  MATCH (me)<-[r:FOLLOWS]-(c:User)
  WHERE ($before IS NULL OR r.since < $before) AND NOT c.id IN $hidden
  WITH me, c
  LIMIT $scan
  WITH me, c
  WHERE NOT EXISTS { (me)-[f:FOLLOWS]->(c) WHERE $before IS NULL OR f.since < $before }
  WITH me, c
  LIMIT $edges
  WITH c, COLLECT { MATCH (me)-[i:INTERACTS]-(c) WHERE $before IS NULL OR i.at < $before
                    RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) } AS parts
  RETURN c, 'follows_you' AS source, null AS via,
         reduce(total = 0.0, part IN parts | total + part) AS affinity,
         0.0 AS ra, 0.0 AS aa, 0.0 AS fresh, 0.0 AS cof
  UNION ALL
  CALL (me) {
    MATCH (me)-[r:FOLLOWS]->(x:User)
    WHERE ($before IS NULL OR r.since < $before) AND NOT x.id IN $hidden
    WITH x, COUNT { (x)<-[:FOLLOWS]-() } AS followers
    ORDER BY followers, x.id
    LIMIT $items
    CALL (me, x) {
      MATCH (x)<-[r:FOLLOWS]-(w:User)
      WHERE w <> me AND NOT w:Inactive AND ($before IS NULL OR r.since < $before)
      RETURN w
      LIMIT $edges
    }
    WITH w, sum(1.0 / followers) AS similarity
    ORDER BY similarity DESC, w.id
    LIMIT $cofollowers
    RETURN w, similarity / COUNT { (w)-[:FOLLOWS]->() } AS share
  }
  CALL (me, w) {
    MATCH (w)-[r:FOLLOWS]->(c:User)
    WHERE c <> me AND ($before IS NULL OR r.since < $before)
    RETURN c
    LIMIT $edges
  }
  RETURN c, 'co_followers' AS source, null AS via, 0.0 AS affinity, 0.0 AS ra, 0.0 AS aa,
         0.0 AS fresh, share AS cof
}
WITH me, c,
     collect(DISTINCT source) AS sources,
     sum(CASE source WHEN 'friends_of_friends' THEN 1 ELSE 0 END) AS paths,
     sum(ra) AS ra, sum(aa) AS aa, sum(affinity * ra) AS affinity_ra, max(fresh) AS fresh,
     sum(cof) AS cof, count(CASE source WHEN 'co_followers' THEN 1 END) AS cof_paths,
     max(CASE source WHEN 'follows_you' THEN 1.0 ELSE 0.0 END) AS follows_you,
     max(CASE source WHEN 'follows_you' THEN affinity ELSE 0.0 END) AS follower_affinity,
     collect(CASE WHEN via IS NOT NULL THEN {id: via, affinity: affinity} END) AS vias
// Best first, then the exclusions, checked lazily until $candidates pass: a user's
// neighbourhood holds thousands of candidates, and each check reads my relationships.
ORDER BY ra + cof + follows_you DESC, c.id
WITH * WHERE NOT c:Inactive AND NOT c:Erasing
  AND (c.id IN $hidden OR NOT EXISTS {
    (me)-[f:FOLLOWS]->(c) WHERE $before IS NULL OR f.since < $before })
  AND NOT EXISTS { (me)-[:BLOCKS]-(c) }
  AND NOT EXISTS { (me)-[:DISMISSED]->(c) }
LIMIT $candidates
// Degrees and the last activity, as of $before when training (CASE evaluates one branch:
// serving reads the degree store and the activity clock, O(1) per candidate).
WITH me, c, sources, paths, ra, aa, affinity_ra, fresh, cof, cof_paths, follows_you,
     follower_affinity, vias,
     CASE WHEN $before IS NULL THEN COUNT { (c)<-[:FOLLOWS]-() }
          ELSE COUNT { (c)<-[r:FOLLOWS]-() WHERE r.since < $before } END AS followers,
     CASE WHEN $before IS NULL THEN COUNT { (c)-[:FOLLOWS]->() }
          ELSE COUNT { (c)-[r:FOLLOWS]->() WHERE r.since < $before } END AS follows,
     CASE WHEN $before IS NULL THEN c.clk
          ELSE COLLECT { MATCH (c)-[r:FOLLOWS]->() WHERE r.since < $before
                         RETURN r.since ORDER BY r.since DESC LIMIT 1 }[0] END AS active
// One record holding a list per candidate, in the order of CANDIDATE_COLUMNS (suggestions.py):
// the driver builds 300 records ~20 ms slower than one record of 300 lists.
RETURN collect([
  c.id, sources, paths, ra, aa, affinity_ra, fresh, cof, cof_paths, follows_you,
  follower_affinity,
  // my hidden edges with c do not count either (the random holdout)
  followers - CASE WHEN c.id IN $hidden AND EXISTS { (me)-[:FOLLOWS]->(c) } THEN 1 ELSE 0 END,
  follows - CASE WHEN c.id IN $hidden AND EXISTS { (c)-[:FOLLOWS]->(me) } THEN 1 ELSE 0 END,
  CASE WHEN active IS NULL THEN 0.0 ELSE 2.0 ^ (toFloat(active - $now) / $fresh_h) END,
  vias
]) AS rows
