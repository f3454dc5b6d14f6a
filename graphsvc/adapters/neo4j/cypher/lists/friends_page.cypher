// friends_page: active mutual follows of $id, closest first: by affinity (interactions both
// ways, decayed), then newest follow (by $id), then id; keyset-paged on all three.
// The affinity key is log2 of the affinity taken at a fixed reference time $ref rather than
// now: decay scales every affinity alike, so the order is the same and a cursor's key stays
// comparable; in the log domain it cannot overflow. Friends without interactions share the
// key -1e300. A friend whose affinity rises during a walk may be passed over by that walk.
// Reads $id's followings (bounded by MAX_FOLLOWING) and tests each for the reverse edge.
// Params: $id, $score (float, +inf for the first page), $since, $after, $limit, $ref, $h.
MATCH (u:User {id: $id})-[r:FOLLOWS]->(f:User)
WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) }
WITH f, r.since AS since,
     COLLECT {
       MATCH (u)-[i:INTERACTS]-(f)
       WHERE i.w > 0
       RETURN log(i.w) / log(2.0) + toFloat(i.at - $ref) / $h
     } AS exponents
WITH f.id AS id, since,
     CASE size(exponents)
       WHEN 0 THEN -1.0e300
       WHEN 1 THEN exponents[0]
       // at most one edge per direction: log2(2^x + 2^y), computed without overflow
       ELSE CASE WHEN exponents[0] >= exponents[1]
              THEN exponents[0] + log(1.0 + 2.0 ^ (exponents[1] - exponents[0])) / log(2.0)
              ELSE exponents[1] + log(1.0 + 2.0 ^ (exponents[0] - exponents[1])) / log(2.0)
            END
     END AS score
WHERE score < $score
   OR (score = $score AND (since < $since OR (since = $since AND id < $after)))
RETURN score, since, id
ORDER BY score DESC, since DESC, id DESC
LIMIT $limit
