// Lists: the pages of a user's followers, followings, friends, celebrities and blocks, and the
// lists two users share. Every list leaves out inactive users, as the mirror's pages do, and every
// page of followers or followings costs what it returns (an index seek from the cursor's
// position), at any depth; a page of blocks reads the user's blocks (blocks_page).

// name: followers_page
// Newest-first keyset page of who follows $id, strictly after ($since, $after), leaving out
// inactive (suspended, spam) users as the mirror's pages do.
// Serves pages past the mirror's capped hot list (and reads when Redis cannot help).
// Cost: two seeks in the follows_dst_since index (dst, since, src), read in its order from the
// cursor's position and stopped by LIMIT: the entries at the cursor's own time after its id,
// then the older ones. The work is the page (plus the inactive followers skipped on the
// way), the same at any depth and for any number of followers; nothing is sorted but the at
// most 2 x $limit rows of the two seeks. The follower's id is the edge's src.
// Locking: none (a read).
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, since, src)
  WHERE r.dst = $id AND r.since = $since AND r.src < $after
  WITH f, r
  ORDER BY r.dst DESC, r.since DESC, r.src DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.src AS id
  LIMIT $limit
  UNION ALL
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, since, src)
  WHERE r.dst = $id AND r.since < $since AND r.src IS NOT NULL
  WITH f, r
  ORDER BY r.dst DESC, r.since DESC, r.src DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.src AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: following_page
// Newest-first keyset page of whom $id follows, strictly after ($since, $after), leaving out
// inactive (suspended, spam) users as the mirror's pages do.
// Cost: two seeks in the follows_src_since index (src, since, dst), read in its order from the
// cursor's position and stopped by LIMIT, as in pages/followers_page: the work is the page
// (plus the inactive users skipped on the way), at any depth. The followed user's id is the
// edge's dst.
// Locking: none (a read).
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH ()-[r:FOLLOWS]->(f)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since = $since AND r.dst < $after
  WITH f, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:FOLLOWS]->(f)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since < $since AND r.dst IS NOT NULL
  WITH f, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: blocks_page
// Newest-first keyset page of the users $id blocks, strictly after ($since, $after), leaving
// out inactive (suspended, spam) users as every list does. The list only its owner reads
// (the service checks the viewer); a blocked user never learns of it from here.
// Cost: the user found by its id (the user_id_unique index), then its outgoing BLOCKS
// relationships, each filtered on the cursor's position, and the newest $limit kept (a top-k
// sort): O(the user's blocks, at most MAX_BLOCKS) per page. An index on BLOCKS(since) would
// not help: it orders every user's blocks together, so a seek in it would read all blocks
// newer than the cursor, of everyone, to find this user's; the planner starts from the
// user's node instead.
// Locking: none (a read).
// Rules: an unknown $id has no blocks (no row).
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since (when the block was made), id; at most $limit rows, newest first.
MATCH (:User {id: $id})-[k:BLOCKS]->(b:User)
WHERE NOT b:Inactive AND (k.since < $since OR (k.since = $since AND b.id < $after))
RETURN k.since AS since, b.id AS id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: friends_page
// Active mutual follows of $id, closest first: by affinity (interactions both ways, decayed),
// then newest follow (by $id), then id; keyset-paged on all three.
// The affinity key is log2 of the affinity taken at a fixed reference time $ref rather than
// now: decay scales every affinity alike, so the order is the same and a position's key stays
// comparable; in the log domain it cannot overflow. Friends without interactions share the
// key -1e300. A friend whose affinity rises during a walk may be passed over by that walk.
// Rules: a cursor carries no score (affinities are never shown), so the key of the position
// ($since, $after) is computed again here, from the interactions between $id and $after, in
// the same pass as every friend's (the anchor row); with no position the key is $top.
// Reads $id's followings (bounded by MAX_FOLLOWING) and tests each for the reverse edge.
// Locking: none (a read). Params: $id, $since, $after ('' for the first page), $limit, $ref,
// $h, $top (+inf). Returns: score, since, id.
MATCH (u:User {id: $id})
CALL (u) {
  MATCH (u)-[r:FOLLOWS]->(f:User)
  WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) }
  RETURN f, r.since AS since, false AS anchor
  UNION ALL
  MATCH (f:User {id: $after})
  RETURN f, $since AS since, true AS anchor
}
WITH f, since, anchor,
     COLLECT {
       MATCH (u)-[i:INTERACTS]-(f)
       WHERE i.w > 0
       RETURN log(i.w) / log(2.0) + toFloat(i.at - $ref) / $h
     } AS exponents
WITH f.id AS id, since, anchor,
     CASE size(exponents)
       WHEN 0 THEN -1.0e300
       WHEN 1 THEN exponents[0]
       // at most one edge per direction: log2(2^x + 2^y), computed without overflow
       ELSE CASE WHEN exponents[0] >= exponents[1]
              THEN exponents[0] + log(1.0 + 2.0 ^ (exponents[1] - exponents[0])) / log(2.0)
              ELSE exponents[1] + log(1.0 + 2.0 ^ (exponents[0] - exponents[1])) / log(2.0)
            END
     END AS score
WITH collect({id: id, since: since, score: score, anchor: anchor}) AS rows
WITH rows, coalesce(head([row IN rows WHERE row.anchor | row.score]), $top) AS key
UNWIND rows AS row
WITH row, key
WHERE NOT row.anchor
  AND (row.score < key
       OR (row.score = key AND (row.since < $since OR (row.since = $since AND row.id < $after))))
RETURN row.score AS score, row.since AS since, row.id AS id
ORDER BY score DESC, since DESC, id DESC
LIMIT $limit

// name: celebrities_page
// The active users $id follows that have at least $threshold followers, newest follow first,
// keyset-paged (what a pull-model timeline fans in from).
// Cost: $id's followings read newest first through the follows_src_since index (src, since,
// dst) from the cursor's position, as in pages/following_page, and stopped once the page is
// full: each followed user's degree is O(1) in Neo4j, and its counts setting a property of
// the node it reaches anyway. A page reads at most the followings after the cursor (bounded
// by MAX_FOLLOWING), fewer when celebrities come soon.
// Locking: none (a read).
// Rules (privacy): being a celebrity tells a count, so a followed user whose counts are hidden
// (`pc` set) is one only to $reader itself (who reads the answer; null: an anonymous reader)
// or when $everyone (an admin reading as nobody); to anyone else it is not a celebrity.
// Params: $id, $since, $after, $limit (as in pages/following_page), $threshold, $reader,
// $everyone.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since = $since AND r.dst < $after
  WITH c, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT c:Inactive AND ($everyone OR c.pc IS NULL OR c.id = $reader)
    AND COUNT { (c)<-[:FOLLOWS]-() } >= $threshold
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since < $since AND r.dst IS NOT NULL
  WITH c, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT c:Inactive AND ($everyone OR c.pc IS NULL OR c.id = $reader)
    AND COUNT { (c)<-[:FOLLOWS]-() } >= $threshold
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: common_followers
// Active users who follow both $a and $b, in id order after $after, with their number: exact,
// or a lower bound for users with very many followers.
// Walks the followers of whichever of the two has fewer (degrees are O(1) in Neo4j) in id
// order, through the follows_dst_src index (dst, src), and tests each for an edge to the
// other user with one seek in the same index: every step is O(log edges), whatever either
// user's number of followers.
// Bounds: at most $scan followers of the smaller side are examined for the total (exact when
// that side has at most $scan followers, else the common followers among the first $scan:
// a lower bound), and at most $scan after $after for the page, which stops once it holds
// $limit ids (its seek is read in index order and stopped by LIMIT). A page that examined
// $scan followers without filling ends early: the caller finds where it stopped with
// pages/common_followers_end and carries on from there.
// Locking: none (a read).
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

// name: common_followers_end
// Where a page of pages/common_followers that came short stopped: the id of the $scan-th
// follower of $small after $after in id order (through the follows_dst_src index), or no row
// when fewer follow (the list ended within the page).
// Cost: $scan index entries at most.
// Locking: none (a read).
// Params: $small (the walked user's id), $after, $scan. Returns: at most one row: id.
MATCH ()-[r:FOLLOWS]->()
USING INDEX r:FOLLOWS(dst, src)
WHERE r.dst = $small AND r.src > $after
WITH r
ORDER BY r.dst, r.src
SKIP $scan - 1
LIMIT 1
RETURN r.src AS id

// name: common_following
// Active users that both $a and $b follow, in id order after $after, with their number: exact,
// or a lower bound for users who follow very many.
// Walks the followings of whichever of the two follows fewer (degrees are O(1) in Neo4j) in
// id order, through the follows_src_dst index (src, dst), and tests each for an edge from the
// other user with one seek in the same index: every step is O(log edges).
// Bounds: as in pages/common_followers: at most $scan followings of the smaller side are
// examined for the total (exact when that side follows at most $scan users, else a lower
// bound) and at most $scan after $after for the page, which stops once it holds $limit ids;
// a short page of a windowed walk carries on where pages/common_following_end says.
// Locking: none (a read).
// Params: $a, $b, $after ('' to start), $limit, $scan.
// Returns: no row when either user is unknown; else one row: total, exact, page, small,
// windowed (as in pages/common_followers).
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

// name: common_following_end
// Where a page of pages/common_following that came short stopped: the id of the $scan-th user
// $small follows after $after in id order (through the follows_src_dst index), or no row when
// it follows fewer (the list ended within the page).
// Cost: $scan index entries at most.
// Locking: none (a read).
// Params: $small (the walked user's id), $after, $scan. Returns: at most one row: id.
MATCH ()-[r:FOLLOWS]->()
USING INDEX r:FOLLOWS(src, dst)
WHERE r.src = $small AND r.dst > $after
WITH r
ORDER BY r.src, r.dst
SKIP $scan - 1
LIMIT 1
RETURN r.dst AS id

// name: familiar_followers
// Active users $viewer follows who follow $target, the viewer's newest follows first ("Followed
// by A, B and 12 others you follow").
// Reads the viewer's followings (bounded by MAX_FOLLOWING) and tests each for an edge to
// $target (expand-into from the follower's side: a celebrity target costs nothing extra).
// Users in a block with the viewer are left out (a block removes follows, so this guards).
// Rules (privacy): each name reveals that its user follows $target, so a user is named only
// when $reader (who reads the answer; null: an anonymous reader) may see whom it follows:
// `pg` absent (public), or 'followers' and $reader follows it, or 'mutuals' and they follow
// each other, or it is $reader; $everyone (an admin reading as nobody) skips the rule.
// Locking: none (a read).
// Params: $viewer, $target, $reader, $everyone, $limit.
// Returns one row: total, page (the first $limit ids).
OPTIONAL MATCH (v:User {id: $viewer})
OPTIONAL MATCH (t:User {id: $target})
OPTIONAL MATCH (rd:User {id: $reader})
OPTIONAL MATCH (v)-[r:FOLLOWS]->(f:User)
WHERE t IS NOT NULL AND f <> t AND NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(t) }
  AND NOT EXISTS { (v)-[:BLOCKS]-(f) }
  AND ($everyone OR f.pg IS NULL OR f = rd
       OR (rd IS NOT NULL AND f.pg IN ['followers', 'mutuals']
           AND EXISTS { (rd)-[:FOLLOWS]->(f) }
           AND (f.pg = 'followers' OR EXISTS { (f)-[:FOLLOWS]->(rd) })))
WITH r.since AS since, f.id AS id
ORDER BY since DESC, id DESC
WITH collect(id) AS ids
RETURN size(ids) AS total, ids[..$limit] AS page

// name: familiar_followers_many
// For each of $targets (up to FAMILIAR_MAX_IDS), the active users $viewer follows who follow it,
// the viewer's newest follows first: a count and the first $limit ("Followed by A, B and 12
// others you follow" on many profile cards at once).
// Cost: per target, from whichever side is smaller: a target followed by fewer users than
// the viewer follows has its followers read and each tested for the viewer's follow of it;
// else the viewer's followings are read and each tested for a follow of the target. Each test
// is an edge between two known nodes (expand-into, from the side with fewer follows). So a
// target costs at most min(its followers, MAX_FOLLOWING) tests, whatever its degree.
// Rules: as pages/familiar_followers (privacy of each name for $reader; blocks with the viewer
// left out); a target is never its own familiar follower. An unknown target (or viewer) gives
// no row: the caller answers it with none.
// Locking: none (a read).
// Params: $viewer, $targets (distinct ids), $reader, $everyone, $limit.
// Returns one row: rows, a list of [target, total, first ids] for targets with at least one.
OPTIONAL MATCH (v:User {id: $viewer})
OPTIONAL MATCH (rd:User {id: $reader})
WITH v, rd, CASE WHEN v IS NULL THEN 0 ELSE COUNT { (v)-[:FOLLOWS]->() } END AS following
UNWIND $targets AS tid
MATCH (t:User {id: tid})
CALL (v, t, following) {
  CALL (t, following) {
    MATCH (f:User)-[:FOLLOWS]->(t)
    WHERE COUNT { (t)<-[:FOLLOWS]-() } < following
    RETURN f
  }
  MATCH (v)-[r:FOLLOWS]->(f)
  RETURN f, r.since AS since
  UNION ALL
  MATCH (v)-[r:FOLLOWS]->(f:User)
  WHERE COUNT { (t)<-[:FOLLOWS]-() } >= following AND EXISTS { (f)-[:FOLLOWS]->(t) }
  RETURN f, r.since AS since
}
WITH tid, t, v, rd, f, since
WHERE f <> t AND NOT f:Inactive AND NOT EXISTS { (v)-[:BLOCKS]-(f) }
  AND ($everyone OR f.pg IS NULL OR f = rd
       OR (rd IS NOT NULL AND f.pg IN ['followers', 'mutuals']
           AND EXISTS { (rd)-[:FOLLOWS]->(f) }
           AND (f.pg = 'followers' OR EXISTS { (f)-[:FOLLOWS]->(rd) })))
WITH tid, f.id AS id, since
ORDER BY since DESC, id DESC
WITH tid, collect(id) AS ids
RETURN collect([tid, size(ids), ids[..$limit]]) AS rows

// name: distance_ends
// What the first step of a distance search from each end would read: the follows $source
// makes and the follows $target receives.
// Cost: two degrees from the count store.
// Locking: none (a read).
// Params: $source, $target.
// Returns: out (0 for an unknown source), in (0 for an unknown target).
OPTIONAL MATCH (s:User {id: $source})
OPTIONAL MATCH (t:User {id: $target})
RETURN CASE WHEN s IS NULL THEN 0 ELSE COUNT { (s)-[:FOLLOWS]->() } END AS out,
       CASE WHEN t IS NULL THEN 0 ELSE COUNT { (t)<-[:FOLLOWS]-() } END AS in

// name: distance_step
// One step of a distance search: the active users $ids follow ($out) or who follow them,
// through the follows $reader may see: a follow counts when the follower's following or the
// followed user's followers are visible to $reader (`pg`, `pf`: absent is public; 'followers'
// and 'mutuals' ask $reader's ties; $reader itself sees its own; $everyone: an admin reading
// as nobody, every follow).
// Cost: every follow of the frontier in that direction (the caller bounds their number first,
// pages/distance_degrees), and for a follow whose lists are not public, a test of $reader's
// ties to its ends.
// Locking: none (a read).
// Params: $ids, $out (bool), $reader (null: anonymous), $everyone.
// Returns: reached, a list of [id, degree] for the distinct users reached: the follows each
// makes ($out) or receives, what the next step from it would read (from the count store).
OPTIONAL MATCH (rd:User {id: $reader})
UNWIND $ids AS id
MATCH (x:User {id: id})
CALL (x, rd) {
  MATCH (x)-[:FOLLOWS]->(y:User)
  WHERE $out AND NOT y:Inactive
  RETURN x AS a, y AS b, y AS n
  UNION ALL
  MATCH (y:User)-[:FOLLOWS]->(x)
  WHERE NOT $out AND NOT y:Inactive
  RETURN y AS a, x AS b, y AS n
}
WITH rd, a, b, n
WHERE $everyone OR a = rd OR b = rd OR a.pg IS NULL OR b.pf IS NULL
   OR (rd IS NOT NULL AND a.pg IN ['followers', 'mutuals'] AND EXISTS { (rd)-[:FOLLOWS]->(a) }
       AND (a.pg = 'followers' OR EXISTS { (a)-[:FOLLOWS]->(rd) }))
   OR (rd IS NOT NULL AND b.pf IN ['followers', 'mutuals'] AND EXISTS { (rd)-[:FOLLOWS]->(b) }
       AND (b.pf = 'followers' OR EXISTS { (b)-[:FOLLOWS]->(rd) }))
WITH DISTINCT n
RETURN collect([n.id, CASE WHEN $out THEN COUNT { (n)-[:FOLLOWS]->() }
                           ELSE COUNT { (n)<-[:FOLLOWS]-() } END]) AS reached

// name: audience_scan
// One conjunction of an audience: the users of one list ($driver's followers, or whom it
// follows), in id order after $after, that are in every list and in no negated list of $tests.
// Cost: a seek in the id-ordered index of the driver's list (follows_dst_src or
// follows_src_dst) from $after, stopped at $scan entries. A test whose list is no longer than
// $scan (`read`) is read once over the same id range from its own id-ordered index, and its
// entries are looked up in it; a longer one is probed per entry, an edge between two known
// nodes (expand-into, from the side with fewer follows). So at most $scan x (operands) index
// entries or probes, whatever the lists' sizes.
// Rules: inactive users are left out, as every list leaves them out; an unknown operand user
// has an empty list.
// Locking: none (a read).
// Params: $driver, $followers (bool: the driver's followers, else whom it follows), $after
// ('' for the start), $scan, $tests (each {id, followers (bool), neg (bool), read (bool)}).
// Returns one row: examined (entries read), last (the last id read, null for none),
// matched (the ids that passed, in id order).
CALL () {
  MATCH ()-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, src)
  WHERE $followers AND r.dst = $driver AND r.src > $after
  WITH r
  ORDER BY r.dst, r.src
  LIMIT $scan
  RETURN r.src AS x
  UNION ALL
  MATCH ()-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(src, dst)
  WHERE NOT $followers AND r.src = $driver AND r.dst > $after
  WITH r
  ORDER BY r.src, r.dst
  LIMIT $scan
  RETURN r.dst AS x
}
WITH collect(x) AS scanned
WITH scanned, scanned[-1] AS last
CALL (last) {
  UNWIND [t IN $tests WHERE t.read] AS t
  CALL (t, last) {
    MATCH ()-[r:FOLLOWS]->()
    USING INDEX r:FOLLOWS(dst, src)
    WHERE t.followers AND r.dst = t.id AND r.src > $after AND r.src <= last
    RETURN r.src AS y
    UNION ALL
    MATCH ()-[r:FOLLOWS]->()
    USING INDEX r:FOLLOWS(src, dst)
    WHERE NOT t.followers AND r.src = t.id AND r.dst > $after AND r.dst <= last
    RETURN r.dst AS y
  }
  WITH t, collect(y) AS members
  RETURN collect([members, t.neg]) AS read
}
WITH scanned, last, read,
     [x IN scanned WHERE all(m IN read WHERE (x IN m[0]) <> m[1])] AS kept
OPTIONAL MATCH (o:User)
WHERE o.id IN [t IN $tests WHERE NOT t.read | t.id]
WITH scanned, last, kept, collect(o) AS found
WITH scanned, last, kept,
     [t IN $tests WHERE NOT t.read | [head([o IN found WHERE o.id = t.id]), t.followers, t.neg]]
       AS probes
RETURN size(scanned) AS examined, last,
       COLLECT {
         UNWIND kept AS id
         MATCH (x:User {id: id})
         WHERE NOT x:Inactive
         CALL (x, probes) {
           UNWIND probes AS p
           WITH x, p[0] AS o, p[1] AS followers, p[2] AS neg
           WITH neg,
                CASE WHEN o IS NULL THEN false
                     WHEN followers THEN EXISTS { (x)-[:FOLLOWS]->(o) }
                     ELSE EXISTS { (o)-[:FOLLOWS]->(x) } END AS member
           RETURN count(CASE WHEN member <> neg THEN 1 END) AS passed
         }
         WITH x, passed
         WHERE passed = size(probes)
         RETURN x.id
       } AS matched

// name: list_sizes
// The length of both lists of each of $ids: which list of an audience's conjunction to walk.
// Cost: two degrees per user from the count store.
// Locking: none (a read).
// Params: $ids.
// Returns: id, followers, following; a row per known user.
UNWIND $ids AS id
MATCH (u:User {id: id})
RETURN u.id AS id, COUNT { (u)<-[:FOLLOWS]-() } AS followers,
       COUNT { (u)-[:FOLLOWS]->() } AS following
