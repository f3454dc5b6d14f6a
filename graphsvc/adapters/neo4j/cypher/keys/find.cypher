// find: one API key record by id, for authentication (cached briefly by each API process).
// Locking: none (read).
// Parameters: $id
// Returns: id, digest, scopes, user, name, created, revoked (no row when unknown)
MATCH (k:ApiKey {id: $id})
RETURN k.id AS id, k.digest AS digest, k.scopes AS scopes, k.user AS user, k.name AS name,
       k.created AS created, k.revoked AS revoked
