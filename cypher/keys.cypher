// Keys: the API key records (:ApiKey), which hold a key's digest, scopes and bound user; the
// keys themselves are never stored.

// name: create
// Store a new API key record (only the digest of the key, never the key).
// Rules: a key is not bound to a user being erased (its erasure revokes every key bound to
// the id: moderation/erase_begin and moderation/erase_end).
// Locking: the unique constraint on :ApiKey(id) serialises a (vanishingly unlikely) id clash.
// Params: $id, $digest, $scopes (list of strings), $user (string or null), $name, $created (µs).
// Returns: id (no row when $user is being erased).
OPTIONAL MATCH (erasing:User:Erasing {id: $user})
WITH erasing
WHERE erasing IS NULL
CREATE (k:ApiKey {
  id: $id, digest: $digest, scopes: $scopes, user: $user, name: $name,
  created: $created, revoked: false
})
RETURN k.id AS id

// name: find
// One API key record by id, for authentication (cached briefly by each API process).
// Locking: none (a read).
// Params: $id.
// Returns: id, digest, scopes, user, name, created, revoked (no row when unknown).
MATCH (k:ApiKey {id: $id})
RETURN k.id AS id, k.digest AS digest, k.scopes AS scopes, k.user AS user, k.name AS name,
       k.created AS created, k.revoked AS revoked

// name: list
// Every API key record, newest first (digests are not returned).
// Locking: none (a read).
// Params: none.
// Returns: id, digest (always ''), scopes, user, name, created, revoked.
MATCH (k:ApiKey)
RETURN k.id AS id, '' AS digest, k.scopes AS scopes, k.user AS user, k.name AS name,
       k.created AS created, k.revoked AS revoked
ORDER BY k.created DESC, k.id

// name: revoke
// Mark a key revoked (kept, so keys/list shows what existed); idempotent.
// Locking: the key node's write lock.
// Params: $id.
// Returns: id, was_revoked (no row when unknown).
MATCH (k:ApiKey {id: $id})
WITH k, k.revoked AS was_revoked
SET k.revoked = true
RETURN k.id AS id, was_revoked
