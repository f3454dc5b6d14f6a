// fanout_done: end a status fan-out, unless a newer status change made more work (the flags
// of the user's followings disagree with its status again): then it stays pending.
// Params: $id. Returns whether the fan-out is finished.
MATCH (x:User {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, NOT EXISTS {
  (x)-[r:FOLLOWS]->() WHERE coalesce(r.x, false) <> x:Inactive
} AS done
FOREACH (_ IN CASE WHEN done THEN [1] ELSE [] END | REMOVE x:Fanout, x.refresh)
RETURN done
