// follow: create (src)-[:FOLLOWS]->(dst) unless it exists or a rule refuses it.
// Only the follower's node is written, and so locked: the followed user's node is not (unless
// the follower is inactive, below), so follows of one celebrity commit side by side (Neo4j
// inserts relationships of dense nodes concurrently). The follower's lock serializes every
// change to its outgoing edges, so the existence check, the limits and the follower's status
// are exact, and no duplicate edge can appear.
// Each call ticks the follower's hybrid logical clock, clk = max(now, clk + 1), in
// microseconds. A new edge's time is that tick: the follow time shown to clients and the
// version by which the Redis mirror orders writes to this edge.
// A known follower is locked by a plain match before MERGE (MERGE alone would hold a shared
// lock that two calls of one follower then both try to upgrade: a deadlock). The tick after
// MERGE also locks and ticks a follower that MERGE found only because a concurrent call had
// just created it.
// Rules for a NEW edge (an existing one is simply reported): neither user is being erased,
// neither is suspended, no block either way, the follower follows fewer than
// $max_following users, and made fewer than $per_window follows in the last $window_us.
// `a.fl` holds the times of the follower's recent new follows (the rolling window).
// An inactive (spam/suspended) follower's edge is flagged `x` and counted in the followed
// user's `xr` (inactive followers), so active follower counts stay O(1) to read.
// A new edge also creates its event in the outbox (:GraphEvent, in the same transaction), from
// which the relay appends it to the event stream if the service's own append is lost.
// Params: $src, $dst, $max_following, $per_window, $window_us, $event (the event's id).
// Returns changed, version, refused (null or the rule), retry_at (for the rate limit).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
OPTIONAL MATCH (known:User {id: $src})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us
MERGE (a:User {id: $src})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
MERGE (b:User {id: $dst})
WITH a, b, now_us
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, now_us, collect(edge)[0] AS r
WITH a, b, r, [t IN coalesce(a.fl, []) WHERE t > now_us - $window_us] AS recent
WITH a, b, r, recent,
     CASE
       WHEN r IS NOT NULL THEN null
       WHEN a:Erasing OR b:Erasing THEN 'erasing'
       WHEN a.status = 'suspended' THEN 'suspended'
       WHEN b.status = 'suspended' THEN 'target_suspended'
       WHEN EXISTS { (a)-[:BLOCKS]-(b) } THEN 'blocked'
       WHEN COUNT { (a)-[:FOLLOWS]->() } >= $max_following THEN 'following_limit'
       WHEN size(recent) >= $per_window THEN 'rate_limit'
     END AS refused
FOREACH (_ IN CASE WHEN r IS NULL AND refused IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[n:FOLLOWS {since: a.clk}]->(b)
  SET a.fl = recent + [a.clk]
  CREATE (:GraphEvent {id: $event, type: 'follow', src: $src, dst: $dst, v: a.clk})
  FOREACH (_ IN CASE WHEN a:Inactive THEN [1] ELSE [] END |
    SET n.x = true, b.xr = coalesce(b.xr, 0) + 1))
RETURN r IS NULL AND refused IS NULL AS changed, coalesce(r.since, a.clk) AS version, refused,
       CASE WHEN refused = 'rate_limit' THEN recent[0] + $window_us END AS retry_at
