// outbox_due: the oldest outbox events (:GraphEvent) written before $cutoff (µs), for the relay.
// An event stays in the outbox from its write's commit until the relay has made sure it is in
// the event stream (and its users' mirrors are right); the service's own append after the
// commit usually got there first. Params: $cutoff, $limit.
MATCH (e:GraphEvent)
WHERE e.v <= $cutoff
RETURN e.id AS id, e.type AS type, e.src AS src, e.dst AS dst,
       e.v AS version, coalesce(e.status, '') AS status, coalesce(e.cause, '') AS cause
ORDER BY e.v
LIMIT $limit
