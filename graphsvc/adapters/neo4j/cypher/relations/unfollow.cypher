// unfollow: for each row, delete (src)-[:FOLLOWS]->(dst) if it exists. Runs inside a batch's
// transaction (group commit), after lock_users.cypher locked every follower in id order (the
// first statement of a batch runs it as its prelude);
// the rows of one statement have distinct followers, as in follow.cypher.
// Ticks only the follower's clock. The tick is the removal's version; for a no-op it is still
// newer than any instance of this edge, so the mirror can use it to repair a stale entry. A
// flagged edge (inactive follower) also leaves dst's `xr`. A row where either user has never
// existed changes nothing and says so (known false: there is nothing to mirror).
// A removal also creates its event in the outbox (:GraphEvent), as follow.cypher does.
// Params: $rows, each {i, src, dst, event (an id)}.
// Returns per row: i, known, changed (an edge was removed), version.
UNWIND $rows AS row
OPTIONAL MATCH (b:User {id: row.dst})
OPTIONAL MATCH (a:User {id: row.src})
WITH row, a, b, a IS NOT NULL AND b IS NOT NULL AS known, datetime.realtime() AS now
WITH row, a, b, known, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN known THEN [1] ELSE [] END |
  SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END)
WITH row, a, b, known,
     CASE WHEN known THEN COLLECT { MATCH (a)-[edge:FOLLOWS]->(b) RETURN edge } ELSE [] END
       AS edges
WITH row, a, b, known, edges, size([e IN edges WHERE e.x]) AS flagged
FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET b.xr = b.xr - flagged)
FOREACH (e IN edges | DELETE e)
FOREACH (_ IN CASE WHEN size(edges) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: row.event, type: 'unfollow', src: row.src, dst: row.dst, v: a.clk}))
RETURN row.i AS i, known, size(edges) > 0 AS changed, a.clk AS version
