// friends_page: active mutual follows of $id, closest first: by affinity (interactions both
// ways, decayed), then newest follow (by $id), then id; keyset-paged on all three.
// The affinity key is taken at a fixed reference time $ref rather than now: decay scales
// every key alike, so the order is the same, and a cursor's key stays comparable.
// Reads $id's followings (bounded by MAX_FOLLOWING) and tests each for the reverse edge.
// Params: $id, $score (float, +inf for the first page), $since, $after, $limit, $ref, $h.
MATCH (u:User {id: $id})-[r:FOLLOWS]->(f:User)
WHERE NOT f:Inactive AND EXISTS { (f)-[:FOLLOWS]->(u) }
WITH f, r.since AS since,
     COLLECT { MATCH (u)-[i:INTERACTS]-(f) RETURN i.w * 2.0 ^ (toFloat(i.at - $ref) / $h) }
       AS parts
WITH f.id AS id, since, reduce(total = 0.0, part IN parts | total + part) AS score
WHERE score < $score
   OR (score = $score AND (since < $since OR (since = $since AND id < $after)))
RETURN score, since, id
ORDER BY score DESC, since DESC, id DESC
LIMIT $limit
