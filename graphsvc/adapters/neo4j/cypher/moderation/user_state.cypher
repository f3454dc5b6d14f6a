// user_state: a user's status and pending background work; no row for an unknown user.
// Params: $id.
MATCH (u:User {id: $id})
RETURN coalesce(u.status, 'active') AS status, u:Fanout AS fanout, u:Erasing AS erasing
