// outbox_delete: forget outbox events the relay has delivered, by event id (element ids are
// reused by Neo4j soon after a delete, so they could name a newer event). Params: $ids.
UNWIND $ids AS id
MATCH (e:GraphEvent {id: id})
DELETE e
RETURN count(e) AS deleted
