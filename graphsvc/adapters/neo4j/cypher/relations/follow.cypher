// follow: for each row, create (src)-[:FOLLOWS]->(dst) unless it exists or a rule refuses it.
// Runs inside a batch's transaction (group commit), after lock_users.cypher locked every
// follower in id order (the first statement of a batch runs it as its prelude). The rows of one statement have distinct followers (the caller puts a
// follower's next write in the next statement, in arrival order), so each row's checks see
// only its own follower's edges, exactly as one follow at a time would.
// Only the follower's node is written, and so locked: the followed user's node is not (unless
// the follower is inactive, below), so follows of one celebrity commit side by side (Neo4j
// inserts relationships of dense nodes concurrently). The follower's lock serializes every
// change to its outgoing edges, so the existence check, the limits and the follower's status
// are exact, and no duplicate edge can appear.
// Each row ticks the follower's hybrid logical clock, clk = max(now, clk + 1), in
// microseconds. A new edge's time is that tick: the follow time shown to clients and the
// version by which the Redis mirror orders writes to this edge. A new edge also carries the
// ids of its ends (src, dst), by which the list indexes order it (schema.cypher). Both users exist: the batch
// created the unknown ones first (lock_users.cypher). A row whose user was erased and
// deleted since then gives no result row (the caller refuses it as being erased).
// Rules for a NEW edge (an existing one is simply reported): neither user is being erased,
// neither is suspended, no block either way, the follower follows fewer than
// row.max_following users, and made fewer than row.per_window follows in the last row.window_us.
// `a.fl` holds the times of the follower's recent new follows (the rolling window).
// An inactive (spam/suspended) follower's edge is flagged `x` and counted in the followed
// user's `xr` (inactive followers), so active follower counts stay O(1) to read.
// A new edge also creates its event in the outbox (:GraphEvent, in the same transaction), from
// which the relay appends it to the event stream if the service's own append is lost.
// Params: $rows, each {i, src, dst, max_following, per_window, window_us, event (an id)}.
// Returns per row: i, changed, version, refused (null or the rule), retry_at (rate limit).
UNWIND $rows AS row
WITH row, datetime.realtime() AS now
WITH row, now.epochSeconds * 1000000 + now.microsecond AS now_us
MATCH (a:User {id: row.src})
MATCH (b:User {id: row.dst})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
WITH row, a, b, now_us,
     head(COLLECT { MATCH (a)-[edge:FOLLOWS]->(b) RETURN edge }) AS r
WITH row, a, b, r, [t IN coalesce(a.fl, []) WHERE t > now_us - row.window_us] AS recent
WITH row, a, b, r, recent,
     CASE
       WHEN r IS NOT NULL THEN null
       WHEN a:Erasing OR b:Erasing THEN 'erasing'
       WHEN a.status = 'suspended' THEN 'suspended'
       WHEN b.status = 'suspended' THEN 'target_suspended'
       WHEN EXISTS { (a)-[:BLOCKS]-(b) } THEN 'blocked'
       WHEN COUNT { (a)-[:FOLLOWS]->() } >= row.max_following THEN 'following_limit'
       WHEN size(recent) >= row.per_window THEN 'rate_limit'
     END AS refused
FOREACH (_ IN CASE WHEN r IS NULL AND refused IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[n:FOLLOWS {since: a.clk, src: a.id, dst: b.id}]->(b)
  SET a.fl = recent + [a.clk]
  CREATE (:GraphEvent {id: row.event, type: 'follow', src: row.src, dst: row.dst, v: a.clk})
  FOREACH (_ IN CASE WHEN a:Inactive THEN [1] ELSE [] END |
    SET n.x = true, b.xr = coalesce(b.xr, 0) + 1))
RETURN row.i AS i, r IS NULL AND refused IS NULL AS changed,
       coalesce(r.since, a.clk) AS version, refused,
       CASE WHEN refused = 'rate_limit' THEN recent[0] + row.window_us END AS retry_at
