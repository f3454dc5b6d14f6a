// interactions_apply: add one flush of buffered interactions to the affinity edges, exactly
// once. The checkpoint node holds the id of the last buffer entry applied; this transaction
// locks it (a write before the read: MERGE alone would read it without a lock, and two
// flushers could both pass the check), applies only if no other flush moved it since
// ($checkpoint), and moves it to $last, so a flush repeated after a crash (its buffer
// entries not yet trimmed) or racing another process changes nothing.
// An edge (actor)-[:INTERACTS {w, at}]->(target) holds the decayed weight w as of `at`
// (microseconds): w(t) = w * 2^(-(t - at) / h). Adding a reading (w', at') moves `at` to the
// later of the two and decays the other onto it, so the order events arrive in does not matter.
// Rules: users are matched, never created: a pair whose actor or target is not in the graph
// (an id that never followed, was followed or blocked, or an erased one) is dropped, and so is
// a pair with a user being erased (its erasure would only delete the edge). The weight a pair
// gains per day is capped: the edge keeps the day it last gained weight on (`day`, a UTC day
// of the service's clock when it accepted the events) and the raw weight gained that day
// (`dw`); a pair's weight past $daily_max for that day is dropped (its decayed weight is
// scaled by the share that fits). A pair of day -1 (a loader's history) is not capped.
// Locking: the checkpoint node; each kept pair's two users and its edge (MERGE).
// Params: $pairs ([{a, b, w, at, raw, day}], one per pair and day, sorted), $checkpoint,
// $last, $h (half-life, µs), $daily_max.
// Returns one row: whether this flush applied (false: another flush got there first), and
// how many pairs were dropped for an unknown user (`unknown`) or a user being erased
// (`erasing`), and how many the daily cap cut (`capped`).
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
  OPTIONAL MATCH (a:User {id: p.a})
  OPTIONAL MATCH (b:User {id: p.b})
  WITH p, a, b,
       CASE WHEN a IS NULL OR b IS NULL THEN 'unknown'
            WHEN a:Erasing OR b:Erasing THEN 'erasing' END AS dropped
  CALL (p, a, b, dropped) {
    WITH p, a, b
    WHERE dropped IS NULL
    MERGE (a)-[r:INTERACTS]->(b)
    WITH p, r,
         CASE WHEN p.day >= 0 AND coalesce(r.day, -1) >= p.day THEN r.dw ELSE 0.0 END AS used
    WITH p, r, used,
         CASE WHEN p.day < 0 OR used + p.raw <= $daily_max THEN 1.0
              WHEN used >= $daily_max THEN 0.0
              ELSE ($daily_max - used) / p.raw END AS share
    WITH p, r, used, share, CASE WHEN coalesce(r.at, p.at) > p.at THEN r.at ELSE p.at END AS t
    SET r.w = coalesce(r.w, 0.0) * 2.0 ^ (toFloat(coalesce(r.at, t) - t) / $h)
              + share * p.w * 2.0 ^ (toFloat(p.at - t) / $h),
        r.at = t
    FOREACH (_ IN CASE WHEN p.day >= 0 THEN [1] ELSE [] END |
      SET r.dw = used + share * p.raw,
          r.day = CASE WHEN coalesce(r.day, -1) > p.day THEN r.day ELSE p.day END)
    RETURN count(CASE WHEN share < 1.0 THEN 1 END) AS capped
  }
  RETURN count(CASE WHEN dropped = 'unknown' THEN 1 END) AS unknown,
         count(CASE WHEN dropped = 'erasing' THEN 1 END) AS erasing,
         sum(capped) AS capped
}
RETURN current AS applied, unknown, erasing, capped
