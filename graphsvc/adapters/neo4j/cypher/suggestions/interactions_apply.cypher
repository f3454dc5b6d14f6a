// interactions_apply: add one flush of buffered interactions to the affinity edges, exactly
// once. The checkpoint node holds the id of the last buffer entry applied; this transaction
// locks it (a write before the read: MERGE alone would read it without a lock, and two
// flushers could both pass the check), applies only if no other flush moved it since
// ($checkpoint), and moves it to $last, so a flush repeated after a crash (its buffer
// entries not yet trimmed) or racing another process changes nothing.
// An edge (actor)-[:INTERACTS {w, at}]->(target) holds the decayed weight w as of `at`
// (microseconds): w(t) = w * 2^(-(t - at) / h). Adding a reading (w', at') moves `at` to the
// later of the two and decays the other onto it, so the order events arrive in does not matter.
// Users being erased take no new interactions.
// Params: $pairs ([{a, b, w, at}], one per pair, sorted), $checkpoint, $last, $h (half-life, µs).
// Returns one row: whether this flush applied (false: another flush got there first).
MERGE (cp:Checkpoint {name: 'interactions'})
SET cp.locked = true
WITH cp, coalesce(cp.last, '') = $checkpoint AS current
REMOVE cp.locked
SET cp.last = CASE WHEN current THEN $last ELSE cp.last END
WITH current
CALL (current) {
  WITH current
  WHERE current
  UNWIND $pairs AS p
  MERGE (a:User {id: p.a})
  MERGE (b:User {id: p.b})
  WITH p, a, b
  WHERE NOT a:Erasing AND NOT b:Erasing
  MERGE (a)-[r:INTERACTS]->(b)
  WITH r, p, CASE WHEN coalesce(r.at, p.at) > p.at THEN r.at ELSE p.at END AS t
  SET r.w = coalesce(r.w, 0.0) * 2.0 ^ (toFloat(coalesce(r.at, t) - t) / $h)
            + p.w * 2.0 ^ (toFloat(p.at - t) / $h),
      r.at = t
  RETURN count(*) AS written
}
RETURN current AS applied
