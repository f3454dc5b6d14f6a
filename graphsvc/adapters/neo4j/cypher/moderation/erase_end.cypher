// erase_end: delete the erased user's node once its follows are gone (a follow that raced the
// start of the erasure may still have landed: then the batches run again). Other
// relationships that raced in since the last batch of erase_blocks.cypher (blocks, dismissals,
// interactions: none carries mirror work) are deleted with the node, up to $batch of them, so
// a stream of them cannot hold the erasure up. The node is locked (its clock ticks) before the
// check, so no follow can slip in between.
// A key bound to the id since the erasure began is revoked too, and the node is kept until no
// API process may trust a revoked key from its cache any more (`keys_until`, set by
// erase_begin.cypher or here, $grace_us after the revocation): `wait_us` says how long.
// `version`, the tick, is newer than any status version the user had: the mirror uses it to
// forget the user's status, so a later user with the same id starts out active.
// Locking: the user's node; the keys bound to the id.
// Params: $id, $batch, $grace_us. Returns one row: done (the erasure is over), version (null
// when the node was already gone, or is not being erased), wait_us (0, or how long the node
// must be kept for its revoked keys), revoked (ids of keys revoked by this call).
OPTIONAL MATCH (x:User:Erasing {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, now_us
CALL (x) {
  OPTIONAL MATCH (k:ApiKey {user: $id})
  WHERE x IS NOT NULL AND NOT coalesce(k.revoked, false)
  SET k.revoked = true
  RETURN collect(k.id) AS revoked
}
FOREACH (_ IN CASE WHEN size(revoked) > 0 THEN [1] ELSE [] END |
  SET x.keys_until = now_us + $grace_us)
WITH x, now_us, revoked, x.clk AS version,
     CASE WHEN coalesce(x.keys_until, 0) > now_us THEN x.keys_until - now_us ELSE 0 END AS wait_us
WITH x, revoked, version, wait_us,
     x IS NOT NULL AND (wait_us > 0 OR EXISTS { (x)-[:FOLLOWS]-() }
                        OR COUNT { (x)--() } > $batch) AS busy
FOREACH (_ IN CASE WHEN x IS NOT NULL AND NOT busy THEN [1] ELSE [] END | DETACH DELETE x)
RETURN NOT busy AS done, version, wait_us, revoked
