// holdout_cutoff: the time from which the newest $share of all follow edges were made (read
// newest first through the follows_since index: the work is the held-out edges, not the
// graph), and how many edges there are. For `graphsvc train-pymk`.
// Params: $share (0-1). Returns: edges, cutoff (µs; null for an empty graph).
MATCH ()-[r:FOLLOWS]->()
WITH count(r) AS edges
CALL (edges) {
  MATCH ()-[r:FOLLOWS]->()
  WHERE r.since IS NOT NULL
  WITH r.since AS since
  ORDER BY since DESC
  LIMIT toInteger(ceil(edges * $share))
  RETURN min(since) AS cutoff
}
RETURN edges, cutoff
