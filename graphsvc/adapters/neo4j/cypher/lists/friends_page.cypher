// friends_page: active mutual follows of $id, closest first: by affinity (interactions both
// ways, decayed), then newest follow (by $id), then id; keyset-paged on all three.
// The affinity key is log2 of the affinity taken at a fixed reference time $ref rather than
// now: decay scales every affinity alike, so the order is the same and a position's key stays
// comparable; in the log domain it cannot overflow. Friends without interactions share the
// key -1e300. A friend whose affinity rises during a walk may be passed over by that walk.
// Rules: a cursor carries no score (affinities are never shown), so the key of the position
// ($since, $after) is computed again here, from the interactions between $id and $after, in
// the same pass as every friend's (the anchor row); with no position the key is $top.
// Reads $id's followings (bounded by MAX_FOLLOWING) and tests each for the reverse edge.
// Locking: none (a read). Params: $id, $since, $after ('' for the first page), $limit, $ref,
// $h, $top (+inf). Returns: score, since, id.
MATCH (u:User {id: $id})
CALL (u) {
  MATCH (u)-[r:FOLLOWS]->(f:User)
  WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) }
  RETURN f, r.since AS since, false AS anchor
  UNION ALL
  MATCH (f:User {id: $after})
  RETURN f, $since AS since, true AS anchor
}
WITH f, since, anchor,
     COLLECT {
       MATCH (u)-[i:INTERACTS]-(f)
       WHERE i.w > 0
       RETURN log(i.w) / log(2.0) + toFloat(i.at - $ref) / $h
     } AS exponents
WITH f.id AS id, since, anchor,
     CASE size(exponents)
       WHEN 0 THEN -1.0e300
       WHEN 1 THEN exponents[0]
       // at most one edge per direction: log2(2^x + 2^y), computed without overflow
       ELSE CASE WHEN exponents[0] >= exponents[1]
              THEN exponents[0] + log(1.0 + 2.0 ^ (exponents[1] - exponents[0])) / log(2.0)
              ELSE exponents[1] + log(1.0 + 2.0 ^ (exponents[0] - exponents[1])) / log(2.0)
            END
     END AS score
WITH collect({id: id, since: since, score: score, anchor: anchor}) AS rows
WITH rows, coalesce(head([row IN rows WHERE row.anchor | row.score]), $top) AS key
UNWIND rows AS row
WITH row, key
WHERE NOT row.anchor
  AND (row.score < key
       OR (row.score = key AND (row.since < $since OR (row.since = $since AND row.id < $after))))
RETURN row.score AS score, row.since AS since, row.id AS id
ORDER BY score DESC, since DESC, id DESC
LIMIT $limit
