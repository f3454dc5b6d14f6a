// pending_work: users with a status fan-out or an erasure not yet finished (label scans).
MATCH (u:User)
WHERE u:Fanout OR u:Erasing
RETURN u.id AS id, u:Erasing AS erasing
