// erase_begin: mark a user for erasure (label :Erasing): from now on no follow to or from it
// is accepted (follow.cypher), and the erasure resumes after a crash until the node is gone.
// The first call creates the erase event in the outbox (:GraphEvent); the user's clock ticks.
// Params: $id, $event. No row for an unknown user; else whether it was already being erased,
// and the event's version.
MATCH (x:User {id: $id})
WITH x, x:Erasing AS already, datetime.realtime() AS now
WITH x, already, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x:Erasing, x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
FOREACH (_ IN CASE WHEN already THEN [] ELSE [1] END |
  CREATE (:GraphEvent {id: $event, type: 'erase', src: $id, dst: '', v: x.clk}))
RETURN x.id AS id, already, x.clk AS version
