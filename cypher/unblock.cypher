// unblock: remove (src)-[:BLOCKS]->(dst). Follows removed by the block are not restored.
// A removed block creates its event in the outbox (:GraphEvent), versioned by the wall clock
// (an unblock locks no user, so no user clock ticks).
// Params: $src, $dst, $event. Returns whether a block was removed, and the event's version.
OPTIONAL MATCH (:User {id: $src})-[k:BLOCKS]->(:User {id: $dst})
WITH collect(k) AS blocks, datetime.realtime() AS now
FOREACH (k IN blocks | DELETE k)
FOREACH (_ IN CASE WHEN size(blocks) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'unblock', src: $src, dst: $dst,
                       v: now.epochSeconds * 1000000 + now.microsecond}))
RETURN size(blocks) > 0 AS removed, now.epochSeconds * 1000000 + now.microsecond AS version
