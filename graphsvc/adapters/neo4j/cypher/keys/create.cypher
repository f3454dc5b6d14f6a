// create: store a new API key record (only the digest of the key, never the key).
// Locking: the unique constraint on :ApiKey(id) serialises a (vanishingly unlikely) id clash.
// Parameters: $id, $digest, $scopes (list of strings), $user (string or null), $name, $created (us)
// Returns: id
CREATE (k:ApiKey {
  id: $id, digest: $digest, scopes: $scopes, user: $user, name: $name,
  created: $created, revoked: false
})
RETURN k.id AS id
