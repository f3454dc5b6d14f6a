// Snapshots: what the mirror is built and checked from, each read as of Neo4j's clock (`at`).

// name: snapshot
// What the mirror needs to (re)build users, in one round trip for many users.
// `at` is Neo4j's clock read before anything else: every change committed before `at` is
// reflected in the counts and lists, so between two snapshots of a user the later `at` wins.
// A limit of 0 skips that list without reading it (counts-only reads use snapshots/counts).
// Cost and memory: the newest followers are a seek in the follows_dst_since index (dst, since,
// src), read newest first and stopped at $followers_limit: the work is the entries read, not
// a celebrity's millions (the follower's id is the edge's src). The followings are sorted
// whole and then sliced: two Tops of 5,000 or more in one query made Neo4j 5.26 exceed its
// 2.8 GiB transaction memory for a user with 12,000 followers and 12,000 followings (either
// Top alone needs next to nothing), and MAX_FOLLOWING bounds what the sort reads for every
// user a live follow made.
// Locking: as snapshots/counts.
// Params: $ids (list of user ids), $followers_limit, $following_limit.
// Returns per known user (unknown users give no row): id, at, cs, inactive, the counts of
// snapshots/counts, followers and following ([since, id] pairs, newest first, at most their
// limit).
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at
RETURN u.id AS id, at, coalesce(u.cs, 0) AS cs, u:Inactive AS inactive,
       COUNT { (u)<-[:FOLLOWS]-() } AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       COUNT { (u)<-[:FOLLOWS]-() } - coalesce(u.xr, 0) AS followers_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive } AS following_active,
       COUNT { (u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) } }
         AS friends,
       COLLECT {
         MATCH ()-[r:FOLLOWS]->()
         USING INDEX r:FOLLOWS(dst, since, src)
         WHERE $followers_limit > 0 AND r.dst = u.id AND r.since IS NOT NULL
           AND r.src IS NOT NULL
         WITH r
         ORDER BY r.dst DESC, r.since DESC, r.src DESC
         LIMIT $followers_limit
         RETURN [r.since, r.src]
       } AS followers,
       COLLECT {
         MATCH (u)-[r:FOLLOWS]->(f:User) WHERE $following_limit > 0
         WITH r.since AS since, f.id AS id
         ORDER BY since DESC, id DESC
         RETURN [since, id]
       }[..$following_limit] AS following

// name: counts
// Exact counts of many users. `at` is Neo4j's clock read before the counts (see
// snapshots/snapshot).
// Totals come from Neo4j's degree store (no relationship is read), each read once: a dense
// node's degree costs about a millisecond at 30,000 followers. Active followers subtract `xr`,
// the inactive followers counted by every write of an inactive follower and by status
// propagations: O(1). Active followings and friends (active mutual follows) come from one pass over
// the user's followings: O(following), which the MAX_FOLLOWING limit bounds.
// Locking: none (a read, for checks that only compare). What the mirror installs is read with
// snapshots/number_reads as its prelude.
// Params: $ids (list of user ids).
// Returns per known user (unknown users give no row): id, at, cs, followers_count,
// following_count, followers_active, following_active, friends.
WITH datetime.realtime() AS now
UNWIND $ids AS uid
MATCH (u:User {id: uid})
WITH u, now.epochSeconds * 1000000 + now.microsecond AS at,
     COUNT { (u)<-[:FOLLOWS]-() } AS followers,
     [(u)-[:FOLLOWS]->(f) WHERE NOT f:Inactive | EXISTS { (f)-[:FOLLOWS]->(u) }] AS active
RETURN u.id AS id, at, coalesce(u.cs, 0) AS cs,
       followers AS followers_count,
       COUNT { (u)-[:FOLLOWS]->() } AS following_count,
       followers - coalesce(u.xr, 0) AS followers_active,
       size(active) AS following_active,
       size([mutual IN active WHERE mutual]) AS friends

// name: number_reads
// The prelude of a snapshot or count read the mirror installs (snapshots/snapshot,
// snapshots/counts): each user is locked, in id order, and its count sequence `cs` ticks
// (relations/lock_users), so the read's counts are exactly those of every numbered change up
// to `cs` and of every change not numbered (a status propagation, an erasure, a load)
// committed before it; the mirror applies the changes numbered after it.
// Locking: the users' nodes.
// Params: $ids (user ids, sorted).
// Returns: numbered (how many users exist).
UNWIND $ids AS uid
MATCH (u:User {id: uid})
SET u.cs = coalesce(u.cs, 0) + 1
RETURN count(u) AS numbered

// name: clock
// Neo4j's clock now, in microseconds, as snapshots/snapshot and snapshots/counts read it
// (`at`). Read after a commit, it is later than every change that commit made: the floor a
// load puts under the mirror of the users it wrote past the mirror (lua/drop.lua).
// Locking: none (a read).
// Params: none.
// Returns: at.
WITH datetime.realtime() AS now
RETURN now.epochSeconds * 1000000 + now.microsecond AS at

// name: user_count
// How many users exist (answered from Neo4j's count store, O(1)).
// Locking: none (a read).
// Params: none.
// Returns: users.
MATCH (u:User)
RETURN count(u) AS users

// name: user_ids_page
// Every user id in id order, a page at a time (index-backed by the constraint).
// Locking: none (a read).
// Params: $after (user id, '' to start), $limit.
// Returns: id; at most $limit rows, in id order.
MATCH (u:User)
WHERE u.id > $after
RETURN u.id AS id
ORDER BY id
LIMIT $limit

// name: inactive_users
// Every non-active user with its clock (to rebuild the mirror's status set).
// Locking: none (a read).
// Params: $after (user id, '' to start), $limit.
// Returns: id, version (the clock); at most $limit rows, in id order.
MATCH (u:User:Inactive)
WHERE u.id > $after
RETURN u.id AS id, u.clk AS version
ORDER BY id
LIMIT $limit
