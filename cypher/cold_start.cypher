// Cold start: the accounts suggested to users with little to go on. The workers check the
// trending and popular charts against the graph here (the request path only reads the charts
// from Redis and filters them with suggestions/suggest_filter), and a user who just followed
// someone gets the accounts similar to it.

// name: listable
// Which of $ids may be listed as trending or popular, with their follower counts: users of the
// graph (an erased one is gone), active (not :Inactive), not being erased, discoverable (`nd`
// null), showing their counts (`pc` null: both charts rank by follower counts, so a place in
// them would bracket a hidden count between public neighbours). Run by the workers' refresh of the charts over the accounts it ranks and those whose
// counts or state changed: the work is the ids given (an index seek and an O(1) degree each),
// never the graph.
// Locking: none (a read).
// Params: $ids (at most a few thousand).
// Returns: id, followers; a row for each id that may be listed.
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WHERE NOT u:Inactive AND NOT u:Erasing AND u.nd IS NULL AND u.pc IS NULL
RETURN u.id AS id, COUNT { (u)<-[:FOLLOWS]-() } AS followers

// name: popular_scan
// The most followed users that may be listed (as cold_start/listable says). Reads every user's
// degree (O(users), each O(1)): run only by a worker, when the popular chart is missing and
// then every COLD_START_POPULAR_REBUILD_HOURS (a long job's statement), never on a request.
// Locking: none (a read).
// Params: $limit.
// Returns: id, followers; at most $limit rows, most followed first, none without followers.
MATCH (u:User)
WHERE NOT u:Inactive AND NOT u:Erasing AND u.nd IS NULL AND u.pc IS NULL
WITH u.id AS id, COUNT { (u)<-[:FOLLOWS]-() } AS followers
WHERE followers > 0
ORDER BY followers DESC, id
LIMIT $limit
RETURN id, followers

// name: similar
// Accounts similar to $seed, for $id (who typically just followed it): what the seed's
// followers also follow (co-followed accounts, as getSuggestedFollowsByActor and
// similar_to_recently_followed answer).
// Bounded whatever the degrees: the seed's $followers newest followers (a seek in the
// follows_dst_since index, read newest first and stopped at $followers), and of each at most
// its $follows newest follows (a seek in follows_src_since); degrees are O(1) reads.
// Score: each follower w weighs 1 / sqrt(follows(w)) (someone who follows everything says
// little), summed over the followers sharing c, divided by sqrt(followers(c)) (a cosine of the
// seed's and c's followers over the sample), shrunk by shared / (shared + 1) so an account
// followed by one of the sample does not outrank one followed by many.
// Excluded: as suggestions/candidates: $id, the seed, anyone $id follows or asked to follow,
// blocks either way, dismissed, muted by $id (a mute in effect at $now), inactive or erasing
// users, users who are not discoverable (`nd`); and users who hide their counts (`pc`): the
// score divides by the root of c's follower count, so two followers of the seed who follow c
// would read the count back from it, and c's place among public accounts would bracket it.
// A seed that is inactive or being erased suggests nothing.
// Privacy: the seed's followers are read only where $id may see that list (public; 'followers'
// when $id follows the seed; 'mutuals' when both follow each other; always its own), and a
// follower's follows only where $id may see them (as suggestions/candidates reads w's: public,
// or 'followers' / 'mutuals' and $id follows w / each other). An inactive follower is skipped,
// as charts skip it.
// Locking: none (a read).
// Params: $id, $seed, $followers, $follows, $limit, $now (µs), $hidden_degree (the follows
//         a follower that hides its counts is damped by).
// Returns one row: known (whether the seed is a user of the graph), rows: per account
//         [id, score, shared followers], best first, at most $limit.
OPTIONAL MATCH (seed:User {id: $seed})
OPTIONAL MATCH (me:User {id: $id})
WITH seed, me,
     coalesce(seed.id = $id OR seed.pf IS NULL
              OR (me IS NOT NULL AND seed.pf IN ['followers', 'mutuals']
                  AND EXISTS { (me)-[:FOLLOWS]->(seed) }
                  AND (seed.pf = 'followers' OR EXISTS { (seed)-[:FOLLOWS]->(me) })),
              false) AS visible
CALL (seed, me, visible) {
  WITH seed, me
  WHERE visible AND NOT seed:Inactive AND NOT seed:Erasing
  CALL (seed) {
    MATCH (w)-[r:FOLLOWS]->()
    USING INDEX r:FOLLOWS(dst, since, src)
    WHERE r.dst = $seed AND r.since IS NOT NULL AND r.src IS NOT NULL
    WITH w, r
    ORDER BY r.dst DESC, r.since DESC, r.src DESC
    LIMIT $followers
    RETURN w
  }
  WITH seed, me, w
  WHERE NOT w:Inactive AND (me IS NULL OR w <> me)
    AND (w.pg IS NULL
         OR (me IS NOT NULL AND w.pg IN ['followers', 'mutuals']
             AND EXISTS { (me)-[:FOLLOWS]->(w) }
             AND (w.pg = 'followers' OR EXISTS { (w)-[:FOLLOWS]->(me) })))
  CALL (w) {
    MATCH ()-[r:FOLLOWS]->(c)
    USING INDEX r:FOLLOWS(src, since, dst)
    WHERE r.src = w.id AND r.since IS NOT NULL AND r.dst IS NOT NULL
    WITH c, r
    ORDER BY r.src DESC, r.since DESC, r.dst DESC
    LIMIT $follows
    RETURN c
  }
  WITH seed, me, c, 1.0 / sqrt(toFloat(CASE WHEN w.pc IS NULL THEN COUNT { (w)-[:FOLLOWS]->() }
                                             ELSE $hidden_degree END)) AS weight
  WHERE c <> seed AND (me IS NULL OR c <> me)
  WITH me, c, sum(weight) AS weight, count(*) AS shared
  WITH me, c, shared,
       weight / sqrt(toFloat(COUNT { (c)<-[:FOLLOWS]-() })) * shared / (shared + 1.0) AS score
  // best first, the exclusions checked lazily until $limit pass
  ORDER BY score DESC, c.id
  WITH * WHERE NOT c:Inactive AND NOT c:Erasing AND c.nd IS NULL AND c.pc IS NULL
    AND (me IS NULL
         OR NOT (EXISTS { (me)-[:FOLLOWS]->(c) } OR EXISTS { (me)-[:REQUESTS]->(c) }
                 OR EXISTS { (me)-[:BLOCKS]-(c) } OR EXISTS { (me)-[:DISMISSED]->(c) }
                 OR EXISTS { (me)-[m:MUTES]->(c) WHERE m.until IS NULL OR m.until > $now }))
  LIMIT $limit
  RETURN collect([c.id, score, shared]) AS rows
}
RETURN seed IS NOT NULL AS known, rows
