// create: store a new API key record (only the digest of the key, never the key).
// Rules: a key is not bound to a user being erased (its erasure revokes every key bound to
// the id: moderation/erase_begin.cypher and erase_end.cypher).
// Locking: the unique constraint on :ApiKey(id) serialises a (vanishingly unlikely) id clash.
// Parameters: $id, $digest, $scopes (list of strings), $user (string or null), $name, $created (us)
// Returns: id (no row when $user is being erased)
OPTIONAL MATCH (erasing:User:Erasing {id: $user})
WITH erasing
WHERE erasing IS NULL
CREATE (k:ApiKey {
  id: $id, digest: $digest, scopes: $scopes, user: $user, name: $name,
  created: $created, revoked: false
})
RETURN k.id AS id
