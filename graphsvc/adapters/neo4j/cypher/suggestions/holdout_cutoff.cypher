// holdout_cutoff: the time from which the newest $count follow edges were made (read newest
// first through the follows_since index: the work is the held-out edges, not the graph).
// For `graphsvc train-pymk`. Params: $count. Returns: cutoff (µs; null for an empty graph).
MATCH ()-[r:FOLLOWS]->()
WHERE r.since IS NOT NULL
WITH r.since AS since
ORDER BY since DESC
LIMIT $count
RETURN min(since) AS cutoff
