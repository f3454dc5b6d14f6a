// unblock: remove (src)-[:BLOCKS]->(dst). Follows removed by the block are not restored.
// Locks and ticks the blocker's clock, as block.cypher does: the tick versions the unblock
// event (:GraphEvent, created in the outbox when a block was removed) after the block's.
// Params: $src, $dst, $event. Returns whether a block was removed, and the event's version.
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
