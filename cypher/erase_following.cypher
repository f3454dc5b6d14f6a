// erase_following: delete one batch of the erased user's follows. The user is locked and its
// clock ticks once: the tick versions every removal of the batch (each edge once).
// Flagged edges (the user is inactive) leave the followed users' `xr`.
// Params: $id, $batch. Returns the followed users and the removal version (none: done).
MATCH (x:User {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x
MATCH (x)-[r:FOLLOWS]->(y:User)
WITH x, r, y
LIMIT $batch
FOREACH (_ IN CASE WHEN r.x THEN [1] ELSE [] END | SET y.xr = y.xr - 1)
DELETE r
RETURN y.id AS id, x.clk AS version
