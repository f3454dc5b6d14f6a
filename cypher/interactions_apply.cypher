// interactions_apply: add one flush of buffered interactions to the affinity edges, exactly
// once. The checkpoint node holds the id of the last buffer entry applied; this transaction
// applies only if no other flush moved it since ($checkpoint), and moves it to $last, so a
// flush that is repeated after a crash (its buffer entries not yet trimmed) changes nothing.
// An edge (actor)-[:INTERACTS {w, at}]->(target) holds the decayed weight w as of `at`
// (microseconds): w(t) = w * 2^(-(t - at) / h). Adding a reading (w', at') moves `at` to the
// later of the two and decays the other onto it, so the order events arrive in does not matter.
// Params: $pairs ([{a, b, w, at}], one per pair, sorted), $checkpoint, $last, $h (half-life, µs).
MERGE (cp:Checkpoint {name: 'interactions'})
WITH cp
WHERE coalesce(cp.last, '') = $checkpoint
SET cp.last = $last
WITH cp
UNWIND $pairs AS p
MERGE (a:User {id: p.a})
MERGE (b:User {id: p.b})
MERGE (a)-[r:INTERACTS]->(b)
WITH r, p, CASE WHEN coalesce(r.at, p.at) > p.at THEN r.at ELSE p.at END AS t
SET r.w = coalesce(r.w, 0.0) * 2.0 ^ (toFloat(coalesce(r.at, t) - t) / $h)
          + p.w * 2.0 ^ (toFloat(p.at - t) / $h),
    r.at = t
RETURN count(*) AS applied
