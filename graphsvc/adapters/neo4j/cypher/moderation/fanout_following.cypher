// fanout_following: one batch of a status fan-out over the user's followings. Each edge's
// flag `x` must say whether the follower is inactive, and each followed user's `xr` counts its
// flagged edges. The user is locked (its clock ticks), so the batch is serialized with the
// user's own follows and unfollows, which maintain the same flags; repeating it is harmless.
// The followed users whose counts changed are kept on the node (`refresh`) until the next
// batch: a job that stops before refreshing their mirrored counts does it on resume.
// Params: $id, $batch. Returns those users (none: done).
MATCH (x:User {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, x:Inactive AS inactive
OPTIONAL MATCH (x)-[r:FOLLOWS]->(y:User)
WHERE coalesce(r.x, false) <> inactive
WITH x, inactive, r, y
LIMIT $batch
FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END |
  SET r.x = CASE WHEN inactive THEN true END,
      y.xr = coalesce(y.xr, 0) + CASE WHEN inactive THEN 1 ELSE -1 END)
WITH x, collect(y.id) AS ids
SET x.refresh = ids
RETURN ids
