// Suggestions: "people you may know": the candidates and their features, the fallbacks for a
// thin neighbourhood, dismissals, the interactions that weigh affinity, and what the ranker's
// training reads to hold edges out (its models: the ranker_models family).

// name: candidates
// The people $id may know, from every source, with the features the ranker scores (the ranker
// runs in the API process: services/ranker.py).
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
//   walks               random walks with restart from me over follows (Pixie): $walks walks
//                       of $steps steps; at each step a walk away from me jumps back to me
//                       with probability $restart / 1000, else moves to one (by id) of the first
//                       $fanout follows of where it is (none: back to me). The work is at most
//                       $walks x $steps x $fanout edges read, whatever the degrees. The
//                       choices are pseudo-random from $seed (the service derives it from $id),
//                       so a user's walks are the same on every run. Feature: the share of all
//                       steps that visited the candidate (reaches three follows and more).
// Interaction-weighted affinity: each path me -> m -> c weighs 1 + ln(1 + affinity(me, m)),
// one for a friend I never interact with, more the more we do, in the path-based features
// (paths, ra, aa): interacting with m raises every candidate reached through m under every
// ranker, since each keeps a positive weight on them (domain/ranker/scoring.py's PATH_FLOOR).
// Training: edges made at or after $before (µs) are invisible, my follows of the ids in $hidden
// are invisible, and so are the follows of me by the ids in $hidden_back (the other half of a
// friendship held out whole), so the held-out edges are neither paths nor exclusions. A
// held-out follow whose follow-back stays visible is a follower not followed back: what
// serving sees when the follow has not been made yet.
// The candidate's degrees and last activity are counted as of $before too (a look-ahead there
// would leak the held-out edge itself); intermediaries' damping degrees count every edge.
// Serving passes $before = null and $hidden = $hidden_back = [].
// Excluded: $id, anyone $id follows or asked to follow (a pending request), blocks either way,
// inactive or erasing users, dismissed, users who are not discoverable (`nd`), muted by $id (a
// mute in effect at $now). A request is no follow, so no path walks it.
// Privacy: a path reads someone's list only where $id may see it, so a hidden network is never
// an intermediary: m's following (friends_of_friends; $id follows m, so m.pg 'followers' is
// seen, 'mutuals' when m follows $id back, 'private' never), x's followers and w's following
// (co_followers; w's when public, or 'followers' / 'mutuals' and $id follows w / each other),
// and the following of each user a walk steps from (walks: as w's; never an inactive user's;
// my follow that shows it must be visible as of $before). Every via is such an m. An
// intermediary that hides its counts (`pc`) is damped by $hidden_degree, not by its own
// degree, so no score or order moves with a count it hides.
// Locking: none (a read).
// Params: $id, $now, $h (affinity half-life, µs), $fresh_h (path freshness half-life, µs),
//         $before, $hidden, $hidden_back, $intermediaries, $edges, $scan, $items, $cofollowers,
//         $candidates, $walks, $steps, $fanout, $restart (per mille), $seed, $hidden_degree.
// Returns one record, rows: per candidate [id, sources, the features..., vias, counts_hidden]
//         (the order of CANDIDATE_COLUMNS in adapters/neo4j/suggestions.py; vias: every
//         friend-of-friend intermediary with its affinity, of which the service names the 3
//         closest; counts_hidden: c hides its counts (`pc`), so the ranker scores it with its
//         count features at the model's centre).
MATCH (me:User {id: $id})
CALL (me) {
  CALL (me) {
    MATCH (me)-[r:FOLLOWS]->(m:User)
    WHERE NOT m:Inactive AND ($before IS NULL OR r.since < $before) AND NOT m.id IN $hidden
      AND (m.pg IS NULL OR m.pg = 'followers'
           OR (m.pg = 'mutuals' AND EXISTS { (m)-[:FOLLOWS]->(me) }))
    WITH m, r.since AS since,
         COLLECT { MATCH (me)-[i:INTERACTS]-(m) WHERE $before IS NULL OR i.at < $before
                   RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) } AS parts,
         CASE WHEN m.pc IS NULL THEN COUNT { (m)<-[:FOLLOWS]-() } + COUNT { (m)-[:FOLLOWS]->() }
              ELSE $hidden_degree END AS degree
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
  RETURN c, 'friends_of_friends' AS source, m.id AS via, affinity,
         1.0 + log(1.0 + affinity) AS path, 1.0 / degree AS ra,
         1.0 / log(2.0 + degree) AS aa, 2.0 ^ (toFloat(since - $now) / $fresh_h) AS fresh,
         0.0 AS cof, 0.0 AS walk
  UNION ALL
  MATCH (me)<-[r:FOLLOWS]-(c:User)
  WHERE ($before IS NULL OR r.since < $before) AND NOT c.id IN $hidden_back
  WITH me, c
  LIMIT $scan
  WITH me, c
  WHERE NOT EXISTS { (me)-[f:FOLLOWS]->(c)
                     WHERE ($before IS NULL OR f.since < $before) AND NOT c.id IN $hidden }
  WITH me, c
  LIMIT $edges
  WITH c, COLLECT { MATCH (me)-[i:INTERACTS]-(c) WHERE $before IS NULL OR i.at < $before
                    RETURN i.w * 2.0 ^ (toFloat(i.at - $now) / $h) } AS parts
  RETURN c, 'follows_you' AS source, null AS via,
         reduce(total = 0.0, part IN parts | total + part) AS affinity,
         0.0 AS path, 0.0 AS ra, 0.0 AS aa, 0.0 AS fresh, 0.0 AS cof, 0.0 AS walk
  UNION ALL
  CALL (me) {
    MATCH (me)-[r:FOLLOWS]->(x:User)
    WHERE ($before IS NULL OR r.since < $before) AND NOT x.id IN $hidden
      AND (x.pf IS NULL OR x.pf = 'followers'
           OR (x.pf = 'mutuals' AND EXISTS { (x)-[:FOLLOWS]->(me) }))
    WITH x, CASE WHEN x.pc IS NULL THEN COUNT { (x)<-[:FOLLOWS]-() } ELSE $hidden_degree END
            AS followers
    ORDER BY followers, x.id
    LIMIT $items
    CALL (me, x) {
      MATCH (x)<-[r:FOLLOWS]-(w:User)
      WHERE w <> me AND NOT w:Inactive AND ($before IS NULL OR r.since < $before)
        AND (w.pg IS NULL
             OR (w.pg IN ['followers', 'mutuals'] AND EXISTS { (me)-[:FOLLOWS]->(w) }
                 AND (w.pg = 'followers' OR EXISTS { (w)-[:FOLLOWS]->(me) })))
      RETURN w
      LIMIT $edges
    }
    WITH w, sum(1.0 / followers) AS similarity
    ORDER BY similarity DESC, w.id
    LIMIT $cofollowers
    RETURN w, similarity / CASE WHEN w.pc IS NULL THEN COUNT { (w)-[:FOLLOWS]->() }
                                ELSE $hidden_degree END AS share
  }
  CALL (me, w) {
    MATCH (w)-[r:FOLLOWS]->(c:User)
    WHERE c <> me AND ($before IS NULL OR r.since < $before)
    RETURN c
    LIMIT $edges
  }
  RETURN c, 'co_followers' AS source, null AS via, 0.0 AS affinity, 0.0 AS path, 0.0 AS ra,
         0.0 AS aa, 0.0 AS fresh, share AS cof, 0.0 AS walk
  UNION ALL
  // $walks walks move together, one step of all of them per turn of reduce (one subquery per
  // step, not per walk and step); each walk carries its Park-Miller state x (x' = 48271 x mod
  // 2^31 - 1), from which a step takes its restart draw (x mod 1000) and its choice among
  // the follows read (x / 1000 mod how many were read).
  WITH me, reduce(
    s = {walks: [k IN range(1, $walks) | {at: me, x: ($seed + 7919 * k) % 2147483646 + 1}],
         seen: []},
    step IN range(1, $steps) |
    [moved IN [COLLECT {
      UNWIND s.walks AS w
      WITH w.at AS a, (48271 * w.x) % 2147483647 AS x
      WITH a, x, COLLECT {
        CALL (me, a, x) {
          MATCH (a)-[r:FOLLOWS]->(n:User)
          WHERE (a = me OR x % 1000 >= $restart) AND n <> me
            AND ($before IS NULL OR r.since < $before)
            AND (a <> me OR NOT n.id IN $hidden)
            AND (a = me OR (NOT a:Inactive AND (a.pg IS NULL
                 OR (a.pg IN ['followers', 'mutuals'] AND NOT a.id IN $hidden
                     AND EXISTS { (me)-[f:FOLLOWS]->(a) WHERE $before IS NULL OR f.since < $before }
                     AND (a.pg = 'followers' OR EXISTS { (a)-[:FOLLOWS]->(me) })))))
          RETURN n
          LIMIT $fanout
        }
        // by id, not in the order the store holds them (a reload may change it)
        RETURN n ORDER BY n.id
      } AS next
      RETURN CASE WHEN size(next) = 0 THEN {at: me, x: x, moved: false}
                  ELSE {at: next[(x / 1000) % size(next)], x: x, moved: true} END
    }] | {walks: moved, seen: s.seen + [m IN moved WHERE m.moved | m.at]}][0]
  ) AS s
  UNWIND s.seen AS c
  WITH c, count(*) AS visits
  RETURN c, 'walks' AS source, null AS via, 0.0 AS affinity, 0.0 AS path, 0.0 AS ra,
         0.0 AS aa, 0.0 AS fresh, 0.0 AS cof, toFloat(visits) / ($walks * $steps) AS walk
}
WITH me, c,
     collect(DISTINCT source) AS sources,
     sum(path) AS paths, sum(path * ra) AS ra, sum(path * aa) AS aa,
     sum(affinity * ra) AS affinity_ra, max(fresh) AS fresh,
     sum(cof) AS cof, count(CASE source WHEN 'co_followers' THEN 1 END) AS cof_paths,
     max(CASE source WHEN 'follows_you' THEN 1.0 ELSE 0.0 END) AS follows_you,
     max(CASE source WHEN 'follows_you' THEN affinity ELSE 0.0 END) AS follower_affinity,
     sum(walk) AS walk,
     collect(CASE WHEN via IS NOT NULL THEN {id: via, affinity: affinity} END) AS vias
// Best first, then the exclusions, checked lazily until $candidates pass: a user's
// neighbourhood holds thousands of candidates. Each check is directed: my relationships to c
// (one existence check of every excluding type: a check per type read them once per type),
// then c's block of me. An undirected check would read the incoming side too, and between
// a much-followed user and a much-followed candidate that is thousands of follows a check.
ORDER BY ra + cof + follows_you + walk DESC, c.id
WITH * WHERE NOT c:Inactive AND NOT c:Erasing AND c.nd IS NULL
  AND NOT EXISTS {
    (me)-[x:FOLLOWS|BLOCKS|DISMISSED|REQUESTS|MUTES]->(c)
    WHERE CASE type(x)
            WHEN 'FOLLOWS' THEN NOT c.id IN $hidden AND ($before IS NULL OR x.since < $before)
            WHEN 'MUTES' THEN x.until IS NULL OR x.until > $now
            ELSE true END }
  AND NOT EXISTS { (c)-[:BLOCKS]->(me) }
LIMIT $candidates
// Degrees and the last activity, as of $before when training (CASE evaluates one branch:
// serving reads the degree store and the activity clock, O(1) per candidate).
WITH me, c, sources, paths, ra, aa, affinity_ra, fresh, cof, cof_paths, follows_you,
     follower_affinity, walk, vias,
     CASE WHEN $before IS NULL THEN COUNT { (c)<-[:FOLLOWS]-() }
          ELSE COUNT { (c)<-[r:FOLLOWS]-() WHERE r.since < $before } END AS followers,
     CASE WHEN $before IS NULL THEN COUNT { (c)-[:FOLLOWS]->() }
          ELSE COUNT { (c)-[r:FOLLOWS]->() WHERE r.since < $before } END AS follows,
     CASE WHEN $before IS NULL THEN c.clk
          ELSE COLLECT { MATCH (c)-[r:FOLLOWS]->() WHERE r.since < $before
                         RETURN r.since ORDER BY r.since DESC LIMIT 1 }[0] END AS active
// One record holding a list per candidate, in the order of CANDIDATE_COLUMNS (suggestions.py):
// the Python driver's work per record made a record per candidate a noticeable share of a
// computed suggestion's time (docs/performance.md, "Computed suggestions with the random walks").
RETURN collect([
  c.id, sources, paths, ra, aa, affinity_ra, fresh, cof, cof_paths, follows_you,
  follower_affinity, walk,
  // my hidden edges with c do not count either (the random holdout)
  followers - CASE WHEN c.id IN $hidden AND EXISTS { (me)-[:FOLLOWS]->(c) } THEN 1 ELSE 0 END,
  follows - CASE WHEN c.id IN $hidden_back AND EXISTS { (c)-[:FOLLOWS]->(me) } THEN 1 ELSE 0 END,
  CASE WHEN active IS NULL THEN 0.0 ELSE 2.0 ^ (toFloat(active - $now) / $fresh_h) END,
  vias, c.pc IS NOT NULL
]) AS rows

// name: three_hop
// People three follows away (me -> m -> w -> c), for a user whose two-hop neighbourhood is thin
// (the service asks only when suggestions/candidates found fewer than SUGGEST_THIN candidates).
// Bounded: at most $intermediaries of my follows, $edges of theirs each, the $items two-hop
// users w reached by most paths, and $edges follows of each w, read.
// A path weighs 1 / (degree(m) * degree(w)): resource allocation over two steps.
// Training: as suggestions/candidates ($before hides newer edges, $hidden my follows of those
// ids, $hidden_back their follows of me).
// Excluded: as suggestions/candidates. Privacy: m's and w's following are read only where $id
// may see them (as suggestions/candidates reads m's and w's).
// Locking: none (a read).
// Params: $id, $now, $fresh_h, $before, $hidden, $hidden_back, $intermediaries, $edges, $items,
//         $candidates, $hidden_degree (the damping degree of an intermediary that hides its
//         counts).
// Returns per candidate: id, hop3 (the summed path weights), hop3_paths, and the candidate's
//         followers, follows, activity and counts_hidden (as suggestions/candidates).
MATCH (me:User {id: $id})
CALL (me) {
  MATCH (me)-[r:FOLLOWS]->(m:User)
  WHERE ($before IS NULL OR r.since < $before) AND NOT m.id IN $hidden
    AND (m.pg IS NULL OR m.pg = 'followers'
         OR (m.pg = 'mutuals' AND EXISTS { (m)-[:FOLLOWS]->(me) }))
  WITH m LIMIT $intermediaries
  CALL (me, m) {
    MATCH (m)-[r:FOLLOWS]->(w:User)
    WHERE w <> me AND ($before IS NULL OR r.since < $before)
      AND (w.pg IS NULL
           OR (w.pg IN ['followers', 'mutuals'] AND EXISTS { (me)-[:FOLLOWS]->(w) }
               AND (w.pg = 'followers' OR EXISTS { (w)-[:FOLLOWS]->(me) })))
    RETURN w LIMIT $edges
  }
  WITH w, sum(1.0 / CASE WHEN m.pc IS NULL
                         THEN COUNT { (m)<-[:FOLLOWS]-() } + COUNT { (m)-[:FOLLOWS]->() }
                         ELSE $hidden_degree END) AS reach
  ORDER BY reach DESC, w.id
  LIMIT $items
  RETURN w, reach / CASE WHEN w.pc IS NULL
                         THEN COUNT { (w)<-[:FOLLOWS]-() } + COUNT { (w)-[:FOLLOWS]->() }
                         ELSE $hidden_degree END AS share
}
CALL (me, w) {
  MATCH (w)-[r:FOLLOWS]->(c:User)
  WHERE c <> me AND ($before IS NULL OR r.since < $before)
  RETURN c LIMIT $edges
}
WITH me, c, sum(share) AS hop3, count(*) AS hop3_paths
// best first, the exclusions checked lazily until $candidates pass (as in suggestions/candidates)
ORDER BY hop3 DESC, c.id
WITH * WHERE NOT c:Inactive AND NOT c:Erasing AND c.nd IS NULL
  AND NOT EXISTS {
    (me)-[x:FOLLOWS|BLOCKS|DISMISSED|REQUESTS|MUTES]-(c)
    WHERE type(x) = 'BLOCKS'
       OR (startNode(x) = me AND CASE type(x)
             WHEN 'FOLLOWS' THEN NOT c.id IN $hidden AND ($before IS NULL OR x.since < $before)
             WHEN 'MUTES' THEN x.until IS NULL OR x.until > $now
             ELSE true END) }
LIMIT $candidates
// degrees and last activity as of $before when training (one CASE branch is evaluated)
WITH me, c, hop3, hop3_paths,
     CASE WHEN $before IS NULL THEN COUNT { (c)<-[:FOLLOWS]-() }
          ELSE COUNT { (c)<-[r:FOLLOWS]-() WHERE r.since < $before } END AS followers,
     CASE WHEN $before IS NULL THEN COUNT { (c)-[:FOLLOWS]->() }
          ELSE COUNT { (c)-[r:FOLLOWS]->() WHERE r.since < $before } END AS follows,
     CASE WHEN $before IS NULL THEN c.clk
          ELSE COLLECT { MATCH (c)-[r:FOLLOWS]->() WHERE r.since < $before
                         RETURN r.since ORDER BY r.since DESC LIMIT 1 }[0] END AS active
// my hidden edges with c do not count either (the random holdout)
RETURN c.id AS id, hop3, hop3_paths,
       followers - CASE WHEN c.id IN $hidden AND EXISTS { (me)-[:FOLLOWS]->(c) } THEN 1 ELSE 0 END
         AS followers,
       follows - CASE WHEN c.id IN $hidden_back AND EXISTS { (c)-[:FOLLOWS]->(me) } THEN 1 ELSE 0 END
         AS follows,
       CASE WHEN active IS NULL THEN 0.0 ELSE 2.0 ^ (toFloat(active - $now) / $fresh_h) END
         AS active, c.pc IS NOT NULL AS counts_hidden

// name: suggest_filter
// Which of $ids may be suggested to $id: known, active, discoverable, showing their counts (the
// trending and popular lists rank by follower counts: a place in them brackets a hidden count),
// not $id, not followed nor requested, no block either way, not dismissed, not muted by $id (a
// mute in effect at $now).
// Locking: none (a read).
// Params: $id, $ids, $now (µs).
// Returns one row: ids (those that may, in the order of $ids).
OPTIONAL MATCH (me:User {id: $id})
UNWIND $ids AS cid
MATCH (c:User {id: cid})
WHERE cid <> $id AND NOT c:Inactive AND NOT c:Erasing AND c.nd IS NULL AND c.pc IS NULL
  AND (me IS NULL OR NOT (EXISTS { (me)-[:FOLLOWS]->(c) } OR EXISTS { (me)-[:BLOCKS]-(c) }
                          OR EXISTS { (me)-[:DISMISSED]->(c) }
                          OR EXISTS { (me)-[:REQUESTS]->(c) }
                          OR EXISTS { (me)-[m:MUTES]->(c)
                                      WHERE m.until IS NULL OR m.until > $now }))
RETURN collect(cid) AS ids

// name: exclusion
// The first rule that keeps $target out of $id's suggestions, for the explainer of a target
// that was not suggested. One fixed order, so a target excluded twice is always named by the
// same rule: itself, unknown user, inactive, erasing, not discoverable, followed, follow
// requested, blocked (either way), muted (a mute in effect at $now), dismissed.
// Locking: none (a read).
// Params: $id, $target, $now (µs).
// Returns one row: excluded (the rule, or null when none holds).
OPTIONAL MATCH (me:User {id: $id})
OPTIONAL MATCH (t:User {id: $target})
RETURN CASE
  WHEN $id = $target THEN 'self'
  WHEN t IS NULL THEN 'unknown_user'
  WHEN t:Inactive THEN 'inactive'
  WHEN t:Erasing THEN 'erasing'
  WHEN t.nd IS NOT NULL THEN 'not_discoverable'
  WHEN me IS NULL THEN null
  WHEN EXISTS { (me)-[:FOLLOWS]->(t) } THEN 'followed'
  WHEN EXISTS { (me)-[:REQUESTS]->(t) } THEN 'follow_requested'
  WHEN EXISTS { (me)-[:BLOCKS]-(t) } THEN 'blocked'
  WHEN EXISTS { (me)-[m:MUTES]->(t) WHERE m.until IS NULL OR m.until > $now } THEN 'muted'
  WHEN EXISTS { (me)-[:DISMISSED]->(t) } THEN 'dismissed'
END AS excluded

// name: following_count
// How many $id follows (the degree store: O(1)); 0 for an unknown user. Asked only for a user
// with too few candidates, to know whether expanding more of its followings can find more (it
// cannot when all of them were expanded already).
// Locking: none (a read).
// Params: $id.
// Returns: following.
OPTIONAL MATCH (u:User {id: $id})
RETURN CASE WHEN u IS NULL THEN 0 ELSE COUNT { (u)-[:FOLLOWS]->() } END AS following

// name: dismiss
// $id never wants $target suggested again.
// Rules: the target must be in the graph (a dismissal never creates it: 'unknown_target'),
// and neither user may be being erased ('erasing': the erasure would only delete the
// dismissal, and must not have to chase new ones). The dismissing user is the acting one: its
// node is created when it has none yet (a newcomer dismissing a cold-start suggestion), as its
// first follow would.
// Locking: the dismissing user's node (MERGE) and both nodes when the dismissal is new.
// Params: $id, $target.
// Returns one row: refused (null, or the rule), created (whether the dismissal is new).
OPTIONAL MATCH (t:User {id: $target})
OPTIONAL MATCH (known:User {id: $id})
WITH t, CASE WHEN t IS NULL THEN 'unknown_target'
             WHEN t:Erasing OR coalesce(known:Erasing, false) THEN 'erasing' END AS refused
CALL (t, refused) {
  WITH t
  WHERE refused IS NULL
  MERGE (me:User {id: $id}) ON CREATE SET me.cs = timestamp() * 1000
  WITH me, t
  OPTIONAL MATCH (me)-[seen:DISMISSED]->(t)
  WITH me, t, collect(seen) AS seen
  FOREACH (_ IN CASE WHEN size(seen) = 0 THEN [1] ELSE [] END | CREATE (me)-[:DISMISSED]->(t))
  RETURN count(CASE WHEN size(seen) = 0 THEN 1 END) > 0 AS created
}
RETURN refused, created

// name: affinities
// The users $id interacts with, closest first (internal: affinity is never shown to users).
// Affinity is symmetric: the decayed weights of both directions, at $now.
// Locking: none (a read).
// Params: $id, $now (µs), $h (half-life, µs), $limit.
// Returns: id, affinity; at most $limit rows, closest first.
MATCH (:User {id: $id})-[r:INTERACTS]-(v:User)
WITH v, sum(r.w * 2.0 ^ (toFloat(r.at - $now) / $h)) AS affinity
ORDER BY affinity DESC, v.id
LIMIT $limit
RETURN v.id AS id, affinity

// name: interactions_apply
// Add one flush of buffered interactions to the affinity edges, exactly once. The checkpoint
// node holds the id of the last buffer entry applied; this transaction locks it (a write
// before the read: MERGE alone would read it without a lock, and two flushers could both pass
// the check), applies only if no other flush moved it since ($checkpoint), and moves it to
// $last, so a flush repeated after a crash (its buffer entries not yet trimmed) or racing
// another process changes nothing.
// An edge (actor)-[:INTERACTS {w, at}]->(target) holds the decayed weight w as of `at`
// (microseconds): w(t) = w * 2^(-(t - at) / h). Adding a reading (w', at') moves `at` to the
// later of the two and decays the other onto it, so the order events arrive in does not matter.
// Rules: users are matched, never created: a pair whose actor or target is not in the graph
// (an id that never followed, was followed or blocked, or an erased one) is dropped, and so is
// a pair with a user being erased (its erasure would only delete the edge). The weight a pair
// gains per day is capped: the edge keeps the day it last gained weight on (`day`, a UTC day
// of the service's clock when it accepted the events) and the raw weight gained that day
// (`dw`); a pair's weight past $daily_max for that day is dropped (its decayed weight is
// scaled by the share that fits). A pair of day -1 (a loader's history) is not capped.
// Locking: the checkpoint node; each kept pair's two users and its edge (MERGE).
// Params: $pairs ([{a, b, w, at, raw, day}], one per pair and day, sorted), $checkpoint,
// $last, $h (half-life, µs), $daily_max.
// Returns one row: applied (false: another flush got there first), and how many pairs were
// dropped for an unknown user (`unknown`) or a user being erased (`erasing`), and how many
// the daily cap cut (`capped`).
MERGE (cp:Checkpoint {name: 'interactions'})
SET cp.locked = true
WITH cp, coalesce(cp.last, '') = $checkpoint AS current
REMOVE cp.locked
SET cp.last = CASE WHEN current THEN $last ELSE cp.last END
WITH current
CALL (current) {
  WITH current
  WHERE current
  UNWIND $pairs AS p
  OPTIONAL MATCH (a:User {id: p.a})
  OPTIONAL MATCH (b:User {id: p.b})
  WITH p, a, b,
       CASE WHEN a IS NULL OR b IS NULL THEN 'unknown'
            WHEN a:Erasing OR b:Erasing THEN 'erasing' END AS dropped
  CALL (p, a, b, dropped) {
    WITH p, a, b
    WHERE dropped IS NULL
    MERGE (a)-[r:INTERACTS]->(b)
    WITH p, r,
         CASE WHEN p.day >= 0 AND coalesce(r.day, -1) >= p.day THEN r.dw ELSE 0.0 END AS used
    WITH p, r, used,
         CASE WHEN p.day < 0 OR used + p.raw <= $daily_max THEN 1.0
              WHEN used >= $daily_max THEN 0.0
              ELSE ($daily_max - used) / p.raw END AS share
    WITH p, r, used, share, CASE WHEN coalesce(r.at, p.at) > p.at THEN r.at ELSE p.at END AS t
    SET r.w = coalesce(r.w, 0.0) * 2.0 ^ (toFloat(coalesce(r.at, t) - t) / $h)
              + share * p.w * 2.0 ^ (toFloat(p.at - t) / $h),
        r.at = t
    FOREACH (_ IN CASE WHEN p.day >= 0 THEN [1] ELSE [] END |
      SET r.dw = used + share * p.raw,
          r.day = CASE WHEN coalesce(r.day, -1) > p.day THEN r.day ELSE p.day END)
    RETURN count(CASE WHEN share < 1.0 THEN 1 END) AS capped
  }
  RETURN count(CASE WHEN dropped = 'unknown' THEN 1 END) AS unknown,
         count(CASE WHEN dropped = 'erasing' THEN 1 END) AS erasing,
         sum(capped) AS capped
}
RETURN current AS applied, unknown, erasing, capped

// name: interactions_checkpoint
// The id of the last interaction-buffer entry applied ('' for none), read by the flusher
// before it applies the next flush (suggestions/interactions_apply).
// Locking: none (a read; suggestions/interactions_apply locks the checkpoint to move it).
// Params: none.
// Returns: last.
OPTIONAL MATCH (cp:Checkpoint {name: 'interactions'})
RETURN coalesce(cp.last, '') AS last

// name: active_users
// Every active user following at least $min others, by id (for the random holdout of
// the ranker's training; O(users), offline).
// Locking: none (a read).
// Params: $min.
// Returns: id, in id order.
MATCH (u:User)
WHERE NOT u:Inactive AND NOT u:Erasing AND COUNT { (u)-[:FOLLOWS]->() } >= $min
RETURN u.id AS id
ORDER BY id

// name: followings_of
// Whom each of $ids follows, each with whether that follow is one half of a friendship (the
// other follows back since the same moment: `graphsvc load --undirected` writes a friendship
// so) and whether the other follows back at all (a follow-back made at another moment is a
// fact of its own). For the random holdout of the ranker's training, which holds out a follow
// alone and a friendship whole. Offline only: reads every following of each user.
// Locking: none (a read).
// Params: $ids.
// Returns: id, following ([id, friendship, followed back] triples); no row for an unknown id.
UNWIND $ids AS uid
MATCH (u:User {id: uid})
RETURN uid AS id,
       COLLECT { MATCH (u)-[r:FOLLOWS]->(v:User)
                 OPTIONAL MATCH (v)-[b:FOLLOWS]->(u)
                 RETURN [v.id, b IS NOT NULL AND b.since = r.since, b IS NOT NULL] }
         AS following

// name: follows_page
// One page of every follow made before $before (null: all of them), after the position
// ($since, $src, $dst) and in that order: the training graph a ranker's validation ranks the
// exact heuristics on, read in pages a paced training can step through (a seek in the
// follows_since index; a page costs its own edges).
// Locking: none (a read).
// Params: $before (µs or null), $since (null: from the start), $src, $dst, $limit.
// Returns: src, dst, since; at most $limit rows.
MATCH ()-[r:FOLLOWS]->()
WHERE r.since >= coalesce($since, -9223372036854775808)
  AND ($before IS NULL OR r.since < $before)
  AND ($since IS NULL OR r.since > $since OR r.src > $src OR (r.src = $src AND r.dst > $dst))
WITH r
ORDER BY r.since, r.src, r.dst
LIMIT $limit
RETURN r.src AS src, r.dst AS dst, r.since AS since

// name: holdout_cutoff
// The time from which the newest $count follow edges were made (read newest first through the
// follows_since index: the work is the held-out edges, not the graph), how many distinct times
// they have, and how many of the steps between consecutive distinct times are one microsecond:
// the clock `graphsvc load` gives rows without times (file order, one microsecond apart). A
// slice with one time, or mostly such steps, is one load's clock, not the order follows were
// made in, so "the newest" would be the file's tail and the training holds out a random share
// instead. Real times (a file's own, or follows made live) step by far more.
// Locking: none (a read).
// Params: $count.
// Returns: cutoff (µs; null for an empty graph), times (distinct times among them), steps
//          (consecutive distinct times one microsecond apart).
MATCH ()-[r:FOLLOWS]->()
WHERE r.since IS NOT NULL
WITH r.since AS since
ORDER BY since DESC
LIMIT $count
WITH collect(DISTINCT since) AS times
RETURN times[-1] AS cutoff, size(times) AS times,
       size([i IN range(1, size(times) - 1) WHERE times[i - 1] - times[i] = 1]) AS steps

// name: holdout_newest
// One page of the follows made from $cutoff on (the held-out edges of the newest holdout),
// after the position ($since, $src, $dst) and in that order, each with whether it is a
// follow-back (the other followed its follower before $cutoff: a held-out follow-back is not a
// discovery, and the report counts it apart). A seek in the follows_since index, read in its
// order: a page costs its own edges, so a paced training reads the holdout in short steps
// beside the serving path. For the ranker's training (suggestions/holdout_users says which
// followers a model can learn from).
// Locking: none (a read).
// Params: $cutoff (µs), $since (null: from the start), $src, $dst, $limit.
// Returns: src, dst, since, back; at most $limit rows.
MATCH (u:User)-[r:FOLLOWS]->(v:User)
WHERE r.since >= coalesce($since, $cutoff)
  AND ($since IS NULL OR r.since > $since OR r.src > $src OR (r.src = $src AND r.dst > $dst))
WITH u, r, v
ORDER BY r.since, r.src, r.dst
LIMIT $limit
RETURN r.src AS src, r.dst AS dst, r.since AS since,
       EXISTS { (v)-[b:FOLLOWS]->(u) WHERE b.since < $cutoff } AS back

// name: holdout_users
// Which of the given users a model can learn from: active, and with follows made before
// $cutoff (they had a neighbourhood when they chose their held-out follows).
// Locking: none (a read).
// Params: $ids, $cutoff (µs).
// Returns: id, one row per such user.
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WHERE NOT u:Inactive AND EXISTS { (u)-[r:FOLLOWS]->() WHERE r.since < $cutoff }
RETURN u.id AS id

// name: edge_count
// How many follow edges the graph holds (Neo4j's count store: O(1)).
// Locking: none (a read).
// Params: none.
// Returns: edges.
MATCH ()-[r:FOLLOWS]->()
RETURN count(r) AS edges
