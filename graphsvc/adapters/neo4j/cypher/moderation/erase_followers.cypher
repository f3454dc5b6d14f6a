// erase_followers: delete one batch of the follows of the erased user. Each follower is
// locked and its clock ticks, as for an unfollow: the tick versions its removal. The erased
// user's `xr` loses the flagged (inactive) followers, so its counts stay exact throughout.
// The batch's removals are kept on the node (`pending`), as in erase_following.cypher.
// Params: $id, $batch. Returns [follower, version] pairs (none: done).
MATCH (x:User:Erasing {id: $id})
OPTIONAL MATCH (x)<-[r:FOLLOWS]-(f:User)
WITH x, r, f
LIMIT $batch
WITH x, r, f, datetime.realtime() AS now
WITH x, r, f, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET f.clk = CASE WHEN coalesce(f.clk, 0) < now_us THEN now_us ELSE f.clk + 1 END
WITH x, collect(CASE WHEN r IS NOT NULL THEN {r: r, id: f.id, version: f.clk} END) AS removed
WITH x, removed, size([e IN removed WHERE e.r.x]) AS flagged
FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET x.xr = x.xr - flagged)
FOREACH (e IN removed | DELETE e.r)
SET x.pending = [e IN removed | e.id + ' ' + $id + ' ' + toString(e.version)]
RETURN [e IN removed | [e.id, e.version]] AS removed
