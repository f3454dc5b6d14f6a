// erase_following: delete one batch of the erased user's follows. The user is locked and its
// clock ticks once: the tick versions every removal of the batch (each edge once).
// Flagged edges (the user is inactive) leave the followed users' `xr`.
// The batch's removals are kept on the node (`pending`, "src dst version" strings) until the
// next batch replaces them: a job that stops before mirroring a batch replays them on resume.
// Params: $id, $batch. Returns the followed users and the removal version (none: done).
MATCH (x:User:Erasing {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x
OPTIONAL MATCH (x)-[r:FOLLOWS]->(y:User)
WITH x, r, y
LIMIT $batch
FOREACH (_ IN CASE WHEN r.x THEN [1] ELSE [] END | SET y.xr = y.xr - 1)
WITH x, collect(r) AS rels, collect(y.id) AS ids
FOREACH (r IN rels | DELETE r)
SET x.pending = [i IN ids | $id + ' ' + i + ' ' + toString(x.clk)]
RETURN ids, x.clk AS version
