// Relations: the writes of follow edges and blocks, each ordered by the users' clocks and
// recorded in the outbox in its own transaction, and the read of how users relate.
// The statements of a batch (group commit) keep their first plan (`CYPHER replan=skip`): each
// starts from its users' ids by the unique index, which no statistic changes, while Neo4j
// would plan them again whenever the graph's counts moved far enough (often on a young,
// growing graph), for up to seconds of a cold server's time, during which the batch holds its
// users' locks and every write of those users waits. A process plans them all before it
// answers (relations/prepare in adapters/neo4j/relations.py).

// name: lock_users
// What a batch of edge writes (group commit) does first, as the prelude of its first statement
// (a CALL subquery before relations/follow or relations/unfollow: one round trip) or alone.
// Locking: takes, in id order, the write lock of every known user the batch writes, the
// followed users included, so two batches writing the same users in opposite orders take
// their locks in one order. Every write that changes a user's counts holds that user's lock
// and numbers the change (`cs`, the user's count sequence, below): the mirror applies a
// user's count changes in that order, once each, so no count is read after the commit.
// A user's count sequence starts at its node's creation time in microseconds (every query that
// creates a user sets it; a bulk import's users start at 0): a user erased and created again
// numbers its changes past the old node's, which the mirror may still hold.
// Users the batch's follows and blocks need and that do not exist yet (`create`) are created
// (and so locked), also in id order.
// A lock is taken by ticking the user's hybrid logical clock, clk = max(now, clk + 1), as every
// edge write does first: the batch's own later ticks stay newer, and a clock only moves forward.
// Unknown users of unfollows and unblocks are not created (those writes change nothing).
// Time: the batch's statements that the mirror follows return `at`, Neo4j's clock read after
// this prelude, so while the batch holds every lock it takes. What the mirror installs is read
// under the same locks, its own `at` read once it holds them (snapshots/number_reads): an
// install older than `at` was read before this batch, a newer one after its commit. So `at`
// fences the batch's mirror writes (lua/common.lua) as a clock read after the commit would.
// Within one process the service never lets two batches of the same users meet here (its
// in-process locks); across processes, Neo4j may still report a deadlock (on locks no query
// can order, such as the relationship chains of shared neighbours), and the batch runs again
// within milliseconds (deadlocks.py).
// Params: $users (sorted by id), each {id, create}.
// Returns: locked (how many users were locked or created).
CYPHER replan=skip
UNWIND $users AS user
OPTIONAL MATCH (known:User {id: user.id})
WITH user, known, known IS NOT NULL AS lock
FOREACH (_ IN CASE WHEN known IS NULL AND user.create THEN [1] ELSE [] END |
  MERGE (n:User {id: user.id}) ON CREATE SET n.cs = timestamp() * 1000)
WITH user, known, lock, datetime.realtime() AS now
WITH known, lock, user, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN lock THEN [1] ELSE [] END |
  SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END)
RETURN count(CASE WHEN lock OR (known IS NULL AND user.create) THEN 1 END) AS locked

// name: follow
// For each row, create (src)-[:FOLLOWS]->(dst) unless it exists or a rule refuses it; when dst
// is locked (`lk`, its privacy setting), create the pending request (src)-[:REQUESTS]->(dst)
// instead, which dst approves or rejects (relations/approve, relations/reject). Runs inside a
// batch's transaction (group commit), after relations/lock_users locked every follower in id
// order (the first statement of a batch runs it as its prelude). Each row runs as its own CALL
// subquery, which sees what the rows before it wrote: the rows of one statement may share users
// (an import's follows of one follower, a move's follows of one account), and each row's checks
// and ticks are exactly those of one follow at a time, in row order.
// Locking: only the follower's node is written, and so locked: the followed user's node is not
// (unless the follower is inactive, below), so follows of one celebrity commit side by side
// (Neo4j inserts relationships of dense nodes concurrently). The follower's lock serializes
// every change to its outgoing edges (follows and requests), so the existence checks, the
// limits and the follower's status are exact, and no duplicate edge can appear.
// Clock: each row ticks the follower's hybrid logical clock, clk = max(now, clk + 1), in
// microseconds. A new edge's time is that tick: the follow time shown to clients and the
// version by which the Redis mirror orders writes to this edge. A new edge also carries the
// ids of its ends (src, dst), by which the list indexes order it (schema/schema). Both users
// exist: the batch created the unknown ones first (relations/lock_users). A row whose user was
// erased and deleted since then gives no result row (the caller refuses it as being erased).
// Rules for a NEW edge or request (an existing follow, or a pending request to a locked user,
// is simply reported): neither user is being erased, neither is suspended, no block either way,
// the follower follows and has requested fewer than row.max_following users together, a new
// request finds fewer than row.max_requests of the follower's requests waiting, and the
// follower made fewer than row.per_window follows and requests in the last row.window_us. `a.fl`
// holds the times of the follower's recent new follows and requests (the rolling window); a row
// that is not paced (row.paced false: a follow the service makes for the user, an import's or a
// move's) neither counts against the window nor is counted in it.
// A follow of a user who is no longer locked also ends a request still pending to it (an
// approval of every request may be running).
// An inactive (spam/suspended) follower's edge is flagged `x` and counted in the followed
// user's `xr` (inactive followers), so active follower counts stay O(1) to read.
// A new edge or request also creates its event in the outbox (:GraphEvent, `follow` or
// `follow_request`, in the same transaction), from which the relay appends it to the event
// stream if the service's own append is lost.
// Counts: a new edge is a change of both users' counts. Both are locked (relations/lock_users),
// so their statuses and the reverse edge are stable: each user's count sequence `cs` ticks,
// and the row returns the facts the mirror derives the changes from (domain/count_changes.py).
// A row reads its own ticks (its subquery sees only the rows before it).
// Options (domain/follow_options.py): the follower's options of this follow live on its edge,
// stored only when not the default, so the indexes on them hold only the edges that need them
// (schema/schema): `notify` (true or absent), `reblogs` (false or absent), `langs` (a list or
// absent: every language), and `filters` (true when reblogs or langs keep posts out of the
// follower's home timeline). A row names the options it sets (null: leave as is; set_langs says
// whether langs is named, [] being every language). A new edge takes them over the defaults, or
// over those of the pending request it replaces; an existing follow, or a pending request to a
// locked user, takes them over its own (`retuned` says whether that changed any).
// Params: $rows, each {i, src, dst, max_following, paced, per_window, window_us, max_requests,
// event (an id), notify, reblogs, langs, set_langs}.
// Returns per row: i, changed, at (relations/lock_users), version, refused (null or the rule),
// retry_at (rate limit),
// requested (the answer is a pending request, not a follow), notify, reblogs, langs (the
// options in effect, stored form), retuned, and for a new edge: src_cs, dst_cs (the ticks),
// src_on, dst_on (whether each is active), back (dst follows src).
CYPHER replan=skip
UNWIND $rows AS row
CALL (row) {
  WITH row, datetime.realtime() AS now
  WITH row, now.epochSeconds * 1000000 + now.microsecond AS now_us
  MATCH (a:User {id: row.src})
  MATCH (b:User {id: row.dst})
  SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
  WITH row, a, b, now_us,
       head(COLLECT { MATCH (a)-[edge:FOLLOWS]->(b) RETURN edge }) AS r,
       head(COLLECT { MATCH (a)-[request:REQUESTS]->(b) RETURN request }) AS q
  WITH row, a, b, r, q, now_us, coalesce(b.lk, false) AND r IS NULL AS ask,
       CASE WHEN row.paced THEN [t IN coalesce(a.fl, []) WHERE t > now_us - row.window_us]
          ELSE [] END AS recent
  WITH row, a, b, r, q, ask, recent, now_us,
       CASE
         WHEN r IS NOT NULL OR (ask AND q IS NOT NULL) THEN null
         WHEN a:Erasing OR b:Erasing THEN 'erasing'
         WHEN a.status = 'suspended' THEN 'suspended'
         WHEN b.status = 'suspended' THEN 'target_suspended'
         WHEN EXISTS { (a)-[:BLOCKS]-(b) } THEN 'blocked'
         WHEN COUNT { (a)-[:FOLLOWS]->() } + COUNT { (a)-[:REQUESTS]->() }
              - CASE WHEN q IS NULL THEN 0 ELSE 1 END >= row.max_following THEN 'following_limit'
         WHEN ask AND COUNT { (a)-[:REQUESTS]->() } >= row.max_requests THEN 'request_limit'
         WHEN size(recent) >= row.per_window THEN 'rate_limit'
       END AS refused
  WITH row, a, b, r, q, ask, recent, refused, now_us, coalesce(r, q) AS base,
       r IS NULL AND refused IS NULL AND NOT (ask AND q IS NOT NULL) AS new
  WITH row, a, b, r, q, ask, recent, refused, base, new, now_us,
       CASE WHEN row.notify IS NULL THEN base.notify WHEN row.notify THEN true END AS notify,
       CASE WHEN row.reblogs IS NULL THEN base.reblogs WHEN NOT row.reblogs THEN false END
         AS reblogs,
       CASE WHEN NOT row.set_langs THEN base.langs WHEN size(row.langs) > 0 THEN row.langs END
         AS langs
  WITH row, a, b, r, q, ask, recent, refused, base, new, notify, reblogs, langs, now_us,
       CASE WHEN reblogs = false OR langs IS NOT NULL THEN true END AS filters
  FOREACH (_ IN CASE WHEN new AND ask THEN [1] ELSE [] END |
    CREATE (a)-[n:REQUESTS {since: a.clk, src: a.id, dst: b.id}]->(b)
    SET a.fl = CASE WHEN row.paced THEN recent + [a.clk] ELSE a.fl END, n.notify = notify, n.reblogs = reblogs, n.langs = langs,
        n.filters = filters
    CREATE (:GraphEvent {id: row.event, type: 'follow_request', src: row.src, dst: row.dst,
                         v: a.clk}))
  FOREACH (_ IN CASE WHEN new AND NOT ask THEN [1] ELSE [] END |
    CREATE (a)-[n:FOLLOWS {since: a.clk, src: a.id, dst: b.id}]->(b)
    SET a.fl = CASE WHEN NOT row.paced THEN a.fl WHEN q IS NULL THEN recent + [a.clk]
                    ELSE recent END,
        n.notify = notify, n.reblogs = reblogs, n.langs = langs, n.filters = filters
    CREATE (:GraphEvent {id: row.event, type: 'follow', src: row.src, dst: row.dst, v: a.clk})
    FOREACH (_ IN CASE WHEN a:Inactive THEN [1] ELSE [] END |
      SET n.x = true, b.xr = coalesce(b.xr, 0) + 1))
  FOREACH (old IN CASE WHEN new AND NOT ask AND q IS NOT NULL THEN [q] ELSE [] END | DELETE old)
  WITH row, a, b, r, q, ask, recent, refused, new, now_us, new AND NOT ask AS counted,
       notify, reblogs, langs, filters,
       NOT new AND refused IS NULL AND (
         coalesce(notify, false) <> coalesce(base.notify, false)
         OR coalesce(reblogs, true) <> coalesce(base.reblogs, true)
         OR coalesce(langs, []) <> coalesce(base.langs, [])) AS retuned
  FOREACH (e IN CASE WHEN retuned THEN [coalesce(r, q)] ELSE [] END |
    SET e.notify = notify, e.reblogs = reblogs, e.langs = langs, e.filters = filters)
  FOREACH (_ IN CASE WHEN counted THEN [1] ELSE [] END |
    SET a.cs = coalesce(a.cs, 0) + 1, b.cs = coalesce(b.cs, 0) + 1)
  RETURN row.i AS i, new AS changed, now_us AS at,
         CASE WHEN ask AND q IS NOT NULL THEN q.since ELSE coalesce(r.since, a.clk) END AS version,
         refused, ask AS requested, notify, reblogs, langs, retuned,
         CASE WHEN refused = 'rate_limit' THEN recent[0] + row.window_us END AS retry_at,
         CASE WHEN counted THEN a.cs END AS src_cs, CASE WHEN counted THEN b.cs END AS dst_cs,
         NOT a:Inactive AS src_on, NOT b:Inactive AS dst_on,
         counted AND EXISTS { (b)-[:FOLLOWS]->(a) } AS back
}
RETURN i, changed, at, version, refused, requested, notify, reblogs, langs, retuned,
       retry_at, src_cs, dst_cs, src_on, dst_on, back

// name: unfollow
// For each row, delete (src)-[:FOLLOWS]->(dst) if it exists, and, when row.withdraw, withdraw a
// pending request (src)-[:REQUESTS]->(dst). Runs inside a batch's transaction (group commit), after
// relations/lock_users locked every follower in id order (the first statement of a batch runs
// it as its prelude); each row is its own CALL subquery, in row order, as in relations/follow.
// Locking: the follower's node, whose clock alone ticks. The tick is the removal's version; for
// a no-op it is still newer than any instance of this edge, so the mirror can use it to repair
// a stale entry. A flagged edge (inactive follower) also leaves dst's `xr`.
// Rules: a row where either user has never existed changes nothing and says so (known false:
// there is nothing to mirror). A follower's removal by the followed user (withdraw false)
// leaves a pending request as it is: the request is that user's to answer, not a follow, and
// the requester withdrew nothing.
// A removed edge leaves its tombstone (:UNFOLLOWED, with the cause and who caused it), from
// which the changes of both users' lists are read (history/follower_changes).
// A removal also creates its event in the outbox (:GraphEvent), as relations/follow does: an
// `unfollow` (with the row's cause, when it has one: `removed` when the followed user ended
// the follow), or a `follow_request_withdrawn`.
// Counts: a removed edge ticks both users' count sequences, as in relations/follow (both are
// locked); `flagged` says whether the edge counted its follower as inactive.
// Params: $rows, each {i, src, dst, event (an id), cause (null or a word), withdraw (bool)}.
// Returns per row: i, known, changed (an edge was removed), withdrawn (a request was), version,
// at (relations/lock_users),
// and for a removed edge: src_cs, dst_cs, src_on, dst_on, back (as relations/follow), flagged.
CYPHER replan=skip
UNWIND $rows AS row
CALL (row) {
  OPTIONAL MATCH (b:User {id: row.dst})
  OPTIONAL MATCH (a:User {id: row.src})
  WITH row, a, b, a IS NOT NULL AND b IS NOT NULL AS known, datetime.realtime() AS now
  WITH row, a, b, known, now.epochSeconds * 1000000 + now.microsecond AS now_us
  FOREACH (_ IN CASE WHEN known THEN [1] ELSE [] END |
    SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END)
  WITH row, a, b, known, now_us,
       CASE WHEN known THEN COLLECT { MATCH (a)-[edge:FOLLOWS]->(b) RETURN edge } ELSE [] END
         AS edges,
       CASE WHEN known AND row.withdraw THEN COLLECT { MATCH (a)-[q:REQUESTS]->(b) RETURN q }
            ELSE [] END AS requests
  WITH row, a, b, known, now_us, edges, requests, size([e IN edges WHERE e.x]) AS flagged,
       size(edges) > 0 AS counted
  FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET b.xr = b.xr - flagged)
  FOREACH (_ IN CASE WHEN counted THEN [1] ELSE [] END |
    SET a.cs = coalesce(a.cs, 0) + 1, b.cs = coalesce(b.cs, 0) + 1)
  FOREACH (e IN edges |
    CREATE (a)-[:UNFOLLOWED {src: row.src, dst: row.dst, since: e.since, at: a.clk,
                             cause: coalesce(row.cause, 'unfollow'),
                             by: CASE WHEN row.cause = 'removed' THEN row.dst ELSE row.src END}]->(b))
  FOREACH (e IN edges + requests | DELETE e)
  FOREACH (_ IN CASE WHEN size(edges) > 0 THEN [1] ELSE [] END |
    CREATE (:GraphEvent {id: row.event, type: 'unfollow', src: row.src, dst: row.dst, v: a.clk,
                         cause: row.cause}))
  FOREACH (_ IN CASE WHEN size(edges) = 0 AND size(requests) > 0 THEN [1] ELSE [] END |
    CREATE (:GraphEvent {id: row.event, type: 'follow_request_withdrawn', src: row.src,
                         dst: row.dst, v: a.clk}))
  RETURN row.i AS i, known, counted AS changed, size(requests) > 0 AS withdrawn,
         a.clk AS version, now_us AS at,
         CASE WHEN counted THEN a.cs END AS src_cs, CASE WHEN counted THEN b.cs END AS dst_cs,
         known AND NOT a:Inactive AS src_on, known AND NOT b:Inactive AS dst_on,
         counted AND EXISTS { (b)-[:FOLLOWS]->(a) } AS back, flagged > 0 AS flagged
}
RETURN i, known, changed, withdrawn, version, at, src_cs, dst_cs, src_on, dst_on, back, flagged

// name: block
// (src)-[:BLOCKS]->(dst), and remove the follows and pending follow requests between them in
// both directions.
// Locking: both users, in id order ($ids is sorted), so block(a, b) and block(b, a) cannot
// deadlock, and a concurrent follow either way (which locks its follower) is serialized with
// the block: it commits first and is removed here, or it sees the block and is refused.
// Each user's clock ticks: the tick of a follower is the version of its removed follow.
// Rules: a new block needs the blocker to block fewer than $max_blocks users, counted under
// its lock, so concurrent blocks never pass the limit ('block_limit'; a refused block removes
// nothing and creates no event). A block that exists is simply reported.
// Outbox events (:GraphEvent): the block when new, and an unfollow per removed follow; each
// removed follow leaves its tombstone (:UNFOLLOWED, cause 'block', by the blocker). When it
// removed any, the blocker's severance notice (`severed`, cause 'block', dst: the blocker): how
// many followers and followings it lost. The blocked user gets none: it is not told of the
// block (domain/changes.py), though it lost follows too.
// Counts: each removed follow ticks both users' count sequences (`cs`, relations/lock_users),
// src -> dst first: the first removal's ticks are the final ones less the second removal's.
// Params: $src, $dst, $ids ([$src, $dst] sorted), $events (four event ids), $max_blocks.
// Returns: refused (null or the rule), created (the block is new), at (relations/lock_users:
// the batch locked both users before), and per direction whether
// a follow was removed and its version: removed_following, following_version,
// removed_followed_by, followed_by_version; src_cs, dst_cs (the final ticks), src_on,
// dst_on (whether each is active), following_flagged, followed_by_flagged (whether the
// removed follow counted its follower as inactive).
CYPHER replan=skip
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND $ids AS id
OPTIONAL MATCH (known:User {id: id})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us, collect(id) AS ids
UNWIND ids AS id
MERGE (u:User {id: id}) ON CREATE SET u.cs = timestamp() * 1000
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH collect(u) AS users
WITH [u IN users WHERE u.id = $src][0] AS a, [u IN users WHERE u.id = $dst][0] AS b
OPTIONAL MATCH (a)-[existing:BLOCKS]->(b)
WITH a, b, collect(existing)[0] AS k
WITH a, b, k,
     CASE WHEN k IS NULL AND COUNT { (a)-[:BLOCKS]->() } >= $max_blocks THEN 'block_limit' END
       AS refused
FOREACH (_ IN CASE WHEN k IS NULL AND refused IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:BLOCKS {since: a.clk}]->(b))
WITH a, b, k, refused
OPTIONAL MATCH (a)-[ab:FOLLOWS]->(b)
WHERE refused IS NULL
WITH a, b, k, refused, collect(ab) AS abs
OPTIONAL MATCH (b)-[ba:FOLLOWS]->(a)
WHERE refused IS NULL
WITH a, b, k, refused, abs, collect(ba) AS bas
WITH a, b, k, refused, abs, bas,
     size([e IN abs WHERE e.x]) AS ab_flagged, size([e IN bas WHERE e.x]) AS ba_flagged
FOREACH (_ IN CASE WHEN ab_flagged > 0 THEN [1] ELSE [] END | SET b.xr = b.xr - ab_flagged)
FOREACH (_ IN CASE WHEN ba_flagged > 0 THEN [1] ELSE [] END | SET a.xr = a.xr - ba_flagged)
FOREACH (_ IN CASE WHEN size(abs) + size(bas) > 0 THEN [1] ELSE [] END |
  SET a.cs = coalesce(a.cs, 0) + size(abs) + size(bas),
      b.cs = coalesce(b.cs, 0) + size(abs) + size(bas))
FOREACH (e IN abs |
  CREATE (a)-[:UNFOLLOWED {src: $src, dst: $dst, since: e.since, at: a.clk, cause: 'block',
                           by: $src}]->(b))
FOREACH (e IN bas |
  CREATE (b)-[:UNFOLLOWED {src: $dst, dst: $src, since: e.since, at: b.clk, cause: 'block',
                           by: $src}]->(a))
FOREACH (e IN abs + bas | DELETE e)
FOREACH (q IN CASE WHEN refused IS NULL THEN COLLECT { MATCH (a)-[q:REQUESTS]-(b) RETURN q }
              ELSE [] END | DELETE q)
FOREACH (_ IN CASE WHEN k IS NULL AND refused IS NULL THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[0], type: 'block', src: $src, dst: $dst, v: a.clk}))
FOREACH (_ IN CASE WHEN size(abs) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[1], type: 'unfollow', src: $src, dst: $dst, v: a.clk,
                       cause: 'block'}))
FOREACH (_ IN CASE WHEN size(bas) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[2], type: 'unfollow', src: $dst, dst: $src, v: b.clk,
                       cause: 'block'}))
FOREACH (_ IN CASE WHEN size(abs) + size(bas) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[3], type: 'severed', src: $dst, dst: $src, v: a.clk,
                       cause: 'block', followers: size(bas), following: size(abs)}))
WITH *, datetime.realtime() AS ended
RETURN refused, k IS NULL AND refused IS NULL AS created,
       ended.epochSeconds * 1000000 + ended.microsecond AS at,
       size(abs) > 0 AS removed_following, a.clk AS following_version,
       size(bas) > 0 AS removed_followed_by, b.clk AS followed_by_version,
       coalesce(a.cs, 0) AS src_cs, coalesce(b.cs, 0) AS dst_cs, NOT a:Inactive AS src_on,
       NOT b:Inactive AS dst_on,
       ab_flagged > 0 AS following_flagged, ba_flagged > 0 AS followed_by_flagged

// name: unblock
// Remove (src)-[:BLOCKS]->(dst). Follows removed by the block are not restored.
// Locking: the blocker's node; its clock ticks, as relations/block's does: the tick versions
// the unblock event (:GraphEvent, created in the outbox when a block was removed) after the
// block's.
// Params: $src, $dst, $event.
// Returns: removed (whether a block was removed), version (the event's).
CYPHER replan=skip
OPTIONAL MATCH (a:User {id: $src})
WITH a, datetime.realtime() AS now
WITH a, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END |
  SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END)
WITH a, now_us
OPTIONAL MATCH (a)-[k:BLOCKS]->(:User {id: $dst})
WITH a, now_us, collect(k) AS blocks
FOREACH (k IN blocks | DELETE k)
FOREACH (_ IN CASE WHEN size(blocks) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'unblock', src: $src, dst: $dst, v: a.clk}))
RETURN size(blocks) > 0 AS removed, coalesce(a.clk, now_us) AS version

// name: approve
// The followed user ($dst) approves the pending request of $src: the request becomes a follow,
// as relations/follow would have made it, and the rules of a new follow are checked again.
// Locking: both users, in id order ($ids is sorted), so an approval and the requester's
// withdrawal (an unfollow, under the requester's lock) or a block are serialized: whichever
// commits first, the other sees it. Both clocks tick; the requester's tick is the new edge's
// time and version, as for any follow.
// Rules: no request and no follow: 'no_request'; an existing follow is reported (an approval
// repeated). Else as relations/follow: neither user being erased or suspended, no block
// either way, and the requester follows fewer than $max_following users (the request itself
// counted against that limit; the rate limit counted it when it was made).
// The new follow keeps the request's options (relations/follow), and creates its event in the
// outbox (:GraphEvent, `follow`, cause `approved`):
// the consumers of follows (timeline backfill, new-follower notifications) take it as a follow.
// Counts: a new follow ticks both users' count sequences, as in relations/follow.
// Params: $src, $dst, $ids ([$src, $dst] sorted), $event, $max_following.
// Returns: changed (a follow was made), refused (null or the rule), at (relations/lock_users:
// the batch locked both users before), version, and for a new
// follow: src_cs, dst_cs, src_on, dst_on, back (as relations/follow).
CYPHER replan=skip
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND $ids AS id
OPTIONAL MATCH (u:User {id: id})
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH collect(u) AS users
WITH [u IN users WHERE u.id = $src][0] AS a, [u IN users WHERE u.id = $dst][0] AS b
WITH a, b,
     CASE WHEN a IS NULL OR b IS NULL THEN null
          ELSE head(COLLECT { MATCH (a)-[q:REQUESTS]->(b) RETURN q }) END AS q,
     CASE WHEN a IS NULL OR b IS NULL THEN null
          ELSE head(COLLECT { MATCH (a)-[r:FOLLOWS]->(b) RETURN r }) END AS r
WITH a, b, q, r,
     CASE
       WHEN r IS NOT NULL THEN null
       WHEN q IS NULL THEN 'no_request'
       WHEN a:Erasing OR b:Erasing THEN 'erasing'
       WHEN a.status = 'suspended' THEN 'suspended'
       WHEN b.status = 'suspended' THEN 'target_suspended'
       WHEN EXISTS { (a)-[:BLOCKS]-(b) } THEN 'blocked'
       WHEN COUNT { (a)-[:FOLLOWS]->() } >= $max_following THEN 'following_limit'
     END AS refused
WITH a, b, q, r, refused, r IS NULL AND refused IS NULL AS approving
FOREACH (_ IN CASE WHEN approving THEN [1] ELSE [] END |
  CREATE (a)-[n:FOLLOWS {since: a.clk, src: a.id, dst: b.id}]->(b)
  SET n.notify = q.notify, n.reblogs = q.reblogs, n.langs = q.langs, n.filters = q.filters
  DELETE q
  CREATE (:GraphEvent {id: $event, type: 'follow', src: $src, dst: $dst, v: a.clk,
                       cause: 'approved'})
  SET a.cs = coalesce(a.cs, 0) + 1, b.cs = coalesce(b.cs, 0) + 1
  FOREACH (_ IN CASE WHEN a:Inactive THEN [1] ELSE [] END |
    SET n.x = true, b.xr = coalesce(b.xr, 0) + 1))
WITH *, datetime.realtime() AS ended
RETURN approving AS changed, refused, ended.epochSeconds * 1000000 + ended.microsecond AS at,
       CASE WHEN r IS NOT NULL THEN r.since ELSE coalesce(a.clk, 0) END AS version,
       CASE WHEN approving THEN a.cs END AS src_cs, CASE WHEN approving THEN b.cs END AS dst_cs,
       NOT a:Inactive AS src_on, NOT b:Inactive AS dst_on,
       approving AND EXISTS { (b)-[:FOLLOWS]->(a) } AS back

// name: reject
// The followed user ($dst) rejects the pending request of $src (the requester is not told; it
// may ask again).
// Locking: the requester's node (its clock ticks, as for a withdrawal): a rejection and an
// approval or withdrawal of the same request are serialized.
// A removed request creates its event in the outbox (:GraphEvent, `follow_request_rejected`).
// Params: $src, $dst, $event.
// Returns: removed (a request was), version.
CYPHER replan=skip
OPTIONAL MATCH (a:User {id: $src})
WITH a, datetime.realtime() AS now
WITH a, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END |
  SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END)
WITH a, now_us,
     CASE WHEN a IS NULL THEN []
          ELSE COLLECT { MATCH (a)-[q:REQUESTS]->(:User {id: $dst}) RETURN q } END AS requests
FOREACH (q IN requests | DELETE q)
FOREACH (_ IN CASE WHEN size(requests) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'follow_request_rejected', src: $src, dst: $dst,
                       v: a.clk}))
RETURN size(requests) > 0 AS removed, coalesce(a.clk, now_us) AS version

// name: relationships
// How one user relates to up to a few hundred others, in one round trip.
// Locking: none (a read, auto-commit).
// Rules: unknown ids (and an unknown $id) give all false.
// Cost: the user's followings (at most MAX_FOLLOWING) are read once and each other id is
// tested against that list; "followed by" and a block either way are tested per id, as an
// edge between two known nodes (expand-into), which Neo4j runs from the side with fewer
// relationships of that type and direction, so a celebrity's followers are never read, nor a
// popular account's blockers: a block test reads at most the blocks its blocker made (at most
// MAX_BLOCKS), a few db hits when either side has few. Collecting the user's blocks and
// blockers instead made every call read all of them, however few ids it asked. Testing the
// followings per id too, four expand-into tests per id, cost several times the db hits of
// reading them once (docs/performance.md, "Relationships with a block check per asked id").
// The user's own mutes in effect (not expired at the read: Neo4j's clock) are read once too,
// as [user, until] pairs (at most MAX_MUTES): a mute is the user's private view, and the
// route answers only the user's own relationships.
// Params: $id, $ids (a list of user ids).
// Pending follow requests: the user's sent ones are read once as its followings are (few:
// they count against MAX_FOLLOWING); one from the other id is tested as "followed by" is.
// The options of the user's follow, or pending request, of each id (relations/follow) come
// with the followings and requests: the user's own, which the route answers only to it; the
// other id's options of its follow of the user are never read.
// Returns: one row, `rows`: a list of [id, following, followed_by, blocking, blocked_by,
// requested, requested_by, muting, muting_until, options] (options: [notify, reblogs, langs]
// in their stored form, or null when the user neither follows nor asked to; a hundred rows
// cost the Python driver more than the query costs Neo4j).
OPTIONAL MATCH (me:User {id: $id})
WITH me, datetime.realtime() AS now
WITH me, now.epochSeconds * 1000000 + now.microsecond AS now_us,
     CASE WHEN me IS NULL THEN [] ELSE
       [(me)-[f:FOLLOWS]->(x) | [x, [f.notify, f.reblogs, f.langs]]] END AS following,
     CASE WHEN me IS NULL THEN [] ELSE
       [(me)-[f:REQUESTS]->(x) | [x, [f.notify, f.reblogs, f.langs]]] END AS requested
WITH me, following, requested,
     CASE WHEN me IS NULL THEN [] ELSE
       [(me)-[m:MUTES]->(x) WHERE m.until IS NULL OR m.until > now_us | [x, m.until]] END
       AS muting
UNWIND $ids AS oid
OPTIONAL MATCH (o:User {id: oid})
WITH me, oid, o, me IS NOT NULL AND o IS NOT NULL AS both,
     [pair IN muting WHERE pair[0] = o] AS muted,
     [pair IN following WHERE pair[0] = o | pair[1]] AS follows,
     [pair IN requested WHERE pair[0] = o | pair[1]] AS asks
RETURN collect([
  oid,
  both AND size(follows) > 0,
  both AND EXISTS { (o)-[:FOLLOWS]->(me) },
  both AND EXISTS { (me)-[:BLOCKS]->(o) },
  both AND EXISTS { (o)-[:BLOCKS]->(me) },
  both AND size(asks) > 0,
  both AND EXISTS { (o)-[:REQUESTS]->(me) },
  both AND size(muted) > 0,
  CASE WHEN both AND size(muted) > 0 THEN muted[0][1] END,
  CASE WHEN both THEN head(follows + asks) END
]) AS rows

// name: follow_filters
// The reader's follows whose options keep some of their author's posts out of its home
// timeline (relations/follow: `filters`), which its timeline reads cache in Redis.
// Locking: none (a read, auto-commit).
// Cost: the reader's followings, at most MAX_FOLLOWING.
// Params: $id (the reader).
// Returns per such follow: id (the author), reblogs (false or null), langs (a list or null).
MATCH (:User {id: $id})-[f:FOLLOWS]->(author:User)
WHERE f.filters
RETURN author.id AS id, f.reblogs AS reblogs, f.langs AS langs
