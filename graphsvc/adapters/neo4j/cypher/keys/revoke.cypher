// revoke: mark a key revoked (kept, so the list shows what existed); idempotent.
// Locking: the key node's write lock.
// Parameters: $id
// Returns: id, was_revoked (no row when unknown)
MATCH (k:ApiKey {id: $id})
WITH k, k.revoked AS was_revoked
SET k.revoked = true
RETURN k.id AS id, was_revoked
