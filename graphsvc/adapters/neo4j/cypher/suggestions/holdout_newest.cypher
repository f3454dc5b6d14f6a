// holdout_newest: the users who made follows at or after $cutoff and also some before it (the
// ones a model can learn from: they had a neighbourhood when they chose), with whom they
// followed from $cutoff on. Reads the held-out edges through the follows_since index.
// For `graphsvc train-pymk`. Params: $cutoff (µs). Returns: id, held (ids), before (count).
MATCH (u:User)-[r:FOLLOWS]->(v:User)
WHERE r.since >= $cutoff
WITH u, collect(v.id) AS held
WITH u, held, COUNT { (u)-[r:FOLLOWS]->() WHERE r.since < $cutoff } AS before
WHERE before > 0 AND NOT u:Inactive
RETURN u.id AS id, held, before
ORDER BY id
