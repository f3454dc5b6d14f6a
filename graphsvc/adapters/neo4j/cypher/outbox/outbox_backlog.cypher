// outbox_backlog: how many outbox events wait for the relay (a /metrics gauge).
// Locking: none (read; the label count comes from Neo4j's count store, O(1)).
// Parameters: none
// Returns: backlog
MATCH (e:GraphEvent)
RETURN count(e) AS backlog
