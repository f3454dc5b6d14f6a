// unfollow: delete (src)-[:FOLLOWS]->(dst) if it exists; no row when either user is unknown.
// Locks and ticks only the follower, as follow.cypher does. The tick is the removal's version;
// for a no-op it is still newer than any instance of this edge, so the mirror can use it to
// repair a stale entry. A flagged edge (inactive follower) also leaves dst's `xr`.
// A removal also creates its event in the outbox (:GraphEvent), as follow.cypher does.
// Params: $src, $dst (user ids), $event. Returns whether an edge was removed, and the version.
MATCH (b:User {id: $dst})
MATCH (a:User {id: $src})
WITH a, b, datetime.realtime() AS now
WITH a, b, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
WITH a, b
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, collect(edge) AS edges
WITH a, b, edges, size([e IN edges WHERE e.x]) AS flagged
FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET b.xr = b.xr - flagged)
FOREACH (e IN edges | DELETE e)
FOREACH (_ IN CASE WHEN size(edges) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'unfollow', src: $src, dst: $dst, v: a.clk}))
RETURN size(edges) > 0 AS changed, a.clk AS version
