// follow: create (src)-[:FOLLOWS]->(dst) unless it exists.
// Only the follower's node is written, and so locked: the followed user's node never is, so
// follows of one celebrity commit side by side (Neo4j inserts relationships of dense nodes
// concurrently). The follower's lock serializes every change to its outgoing edges, so the
// existence check is exact and no duplicate edge can appear.
// Each call ticks the follower's hybrid logical clock, clk = max(now, clk + 1), in
// microseconds. A new edge's time is that tick: the follow time shown to clients and the
// version by which the Redis mirror orders writes to this edge.
// Params: $src, $dst (user ids). Returns whether the edge is new, and its version.
// A known follower is locked by a plain match before MERGE (MERGE alone would hold a shared
// lock that two calls of one follower then both try to upgrade: a deadlock). The tick after
// MERGE also locks and ticks a follower that MERGE found only because a concurrent call had
// just created it.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
OPTIONAL MATCH (known:User {id: $src})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us
MERGE (a:User {id: $src})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
MERGE (b:User {id: $dst})
WITH a, b
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, collect(edge) AS edges
WITH a, b, edges[0] AS r
FOREACH (_ IN CASE WHEN r IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:FOLLOWS {since: a.clk}]->(b))
RETURN r IS NULL AS changed, coalesce(r.since, a.clk) AS version
