// erase_followers: delete one batch of the follows of the erased user. Each follower is
// locked and its clock ticks, as for an unfollow: the tick versions its removal. The erased
// user's `xr` loses the flagged (inactive) followers, so its counts stay exact throughout.
// Params: $id, $batch. Returns the followers and their removal versions (none: done).
MATCH (x:User {id: $id})<-[r:FOLLOWS]-(f:User)
WITH x, r, f
LIMIT $batch
WITH x, r, f, datetime.realtime() AS now
WITH x, r, f, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET f.clk = CASE WHEN coalesce(f.clk, 0) < now_us THEN now_us ELSE f.clk + 1 END
WITH x, collect({r: r, id: f.id, version: f.clk}) AS removed
WITH x, removed, size([e IN removed WHERE e.r.x]) AS flagged
FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET x.xr = x.xr - flagged)
FOREACH (e IN removed | DELETE e.r)
WITH removed
UNWIND removed AS e
RETURN e.id AS id, e.version AS version
