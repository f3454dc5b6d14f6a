// list: every API key record, newest first (digests are not returned).
// Locking: none (read).
// Parameters: none
// Returns: id, scopes, user, name, created, revoked
MATCH (k:ApiKey)
RETURN k.id AS id, '' AS digest, k.scopes AS scopes, k.user AS user, k.name AS name,
       k.created AS created, k.revoked AS revoked
ORDER BY k.created DESC, k.id
