// outbox_delete: forget outbox events the relay has delivered. Params: $elements (element ids).
UNWIND $elements AS element
MATCH (e:GraphEvent)
WHERE elementId(e) = element
DELETE e
RETURN count(e) AS deleted
