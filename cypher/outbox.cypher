// Outbox: the events (:GraphEvent) each write creates in the transaction of its change, which
// the relay appends to the event stream when the service's own append after the commit is lost.

// name: outbox_due
// The oldest outbox events (:GraphEvent) written before $cutoff (µs), for the relay.
// An event stays in the outbox from its write's commit until the relay has made sure it is in
// the event stream (and its users' mirrors are right); the service's own append after the
// commit usually got there first.
// Locking: none (a read).
// Params: $cutoff, $limit.
// Returns: id, type, src, dst, version, status, cause, list ('' when absent), followers,
// following (a severed notice's; 0 when absent); at most $limit
// rows, oldest first.
MATCH (e:GraphEvent)
WHERE e.v <= $cutoff
RETURN e.id AS id, e.type AS type, e.src AS src, e.dst AS dst,
       e.v AS version, coalesce(e.status, '') AS status, coalesce(e.cause, '') AS cause,
       coalesce(e.list, '') AS list, coalesce(e.followers, 0) AS followers,
       coalesce(e.following, 0) AS following
ORDER BY e.v
LIMIT $limit

// name: outbox_delete
// Forget outbox events the relay has delivered, by event id (element ids are reused by Neo4j
// soon after a delete, so they could name a newer event).
// Locking: the events it deletes.
// Params: $ids.
// Returns: deleted (how many of $ids were still there).
UNWIND $ids AS id
MATCH (e:GraphEvent {id: id})
DELETE e
RETURN count(e) AS deleted

// name: outbox_backlog
// How many outbox events wait for the relay (a /metrics gauge).
// Locking: none (a read; the label count comes from Neo4j's count store, O(1)).
// Params: none.
// Returns: backlog.
MATCH (e:GraphEvent)
RETURN count(e) AS backlog
