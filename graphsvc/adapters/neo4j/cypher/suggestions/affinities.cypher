// affinities: the users $id interacts with, closest first (internal: affinity is never shown
// to users). Affinity is symmetric: the decayed weights of both directions, at $now.
// Params: $id, $now (µs), $h (half-life, µs), $limit.
MATCH (:User {id: $id})-[r:INTERACTS]-(v:User)
WITH v, sum(r.w * 2.0 ^ (toFloat(r.at - $now) / $h)) AS affinity
ORDER BY affinity DESC, v.id
LIMIT $limit
RETURN v.id AS id, affinity
