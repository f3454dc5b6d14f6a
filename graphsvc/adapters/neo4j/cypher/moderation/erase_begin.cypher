// erase_begin: mark a user for erasure (label :Erasing): from now on no follow to or from it
// is accepted (follow.cypher), no dismissal (dismiss.cypher) and no interaction
// (interactions_apply.cypher), and the erasure resumes after a crash until the node is gone.
// Every API key bound to the id is revoked, whether or not the user has a node (revoked keys
// are kept, as keys/revoke.cypher keeps them). When keys were revoked, the node remembers until
// when an API process may still trust one from its cache (`keys_until`: now + $grace_us); the
// node is not deleted before then (erase_end.cypher), so an old bound key can never act as a
// later user who takes the id.
// The first call creates the erase event in the outbox (:GraphEvent); the user's clock ticks.
// Locking: the user's node, and the keys bound to the id.
// Params: $id, $event, $grace_us. Returns one row: found (false: no such user), already (it
// was being erased before), version (the event's, null when not found), revoked (ids of the
// keys revoked by this call).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
CALL () {
  OPTIONAL MATCH (k:ApiKey {user: $id})
  WHERE NOT coalesce(k.revoked, false)
  SET k.revoked = true
  RETURN collect(k.id) AS revoked
}
OPTIONAL MATCH (x:User {id: $id})
WITH x, revoked, now_us, coalesce(x:Erasing, false) AS already
FOREACH (_ IN CASE WHEN x IS NULL THEN [] ELSE [1] END |
  SET x:Erasing, x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
  FOREACH (__ IN CASE WHEN size(revoked) > 0 AND coalesce(x.keys_until, 0) < now_us + $grace_us
                      THEN [1] ELSE [] END |
    SET x.keys_until = now_us + $grace_us))
FOREACH (_ IN CASE WHEN x IS NULL OR already THEN [] ELSE [1] END |
  CREATE (:GraphEvent {id: $event, type: 'erase', src: $id, dst: '', v: x.clk}))
RETURN x IS NOT NULL AS found, already, x.clk AS version, revoked
