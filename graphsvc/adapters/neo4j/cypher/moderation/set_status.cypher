// set_status: a user's moderation status: 'active' (no property), 'suspended' or 'spam'.
// Non-active users carry the label :Inactive, which lists, friends and common queries filter
// on. A change between active and inactive also adds :Fanout: the user's follows must then be
// re-flagged in batches (fanout_following.cypher) and the counts of its followers refreshed;
// the label marks that work as pending until it is done, so it resumes after a crash.
// The user is locked and its clock ticks: the tick versions the status in the Redis mirror.
// A change creates its event in the outbox (:GraphEvent).
// Params: $id, $status, $event. Returns the previous status, the version and whether a fan-out is due.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
OPTIONAL MATCH (known:User {id: $id})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us
MERGE (u:User {id: $id})
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH u, coalesce(u.status, 'active') AS previous
SET u.status = CASE WHEN $status = 'active' THEN null ELSE $status END
FOREACH (_ IN CASE WHEN $status = 'active' THEN [] ELSE [1] END | SET u:Inactive)
FOREACH (_ IN CASE WHEN $status = 'active' THEN [1] ELSE [] END | REMOVE u:Inactive)
FOREACH (_ IN CASE WHEN (previous = 'active') <> ($status = 'active') THEN [1] ELSE [] END |
  SET u:Fanout)
FOREACH (_ IN CASE WHEN previous <> $status THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'status', src: $id, dst: '', v: u.clk,
                       status: $status}))
RETURN previous, u.clk AS version, u:Fanout AS fanout
