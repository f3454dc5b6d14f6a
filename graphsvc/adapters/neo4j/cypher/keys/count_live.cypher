// count_live: how many keys are not revoked (a local start creates an admin key when none).
// Locking: none (read).
// Parameters: none
// Returns: live
MATCH (k:ApiKey) WHERE NOT k.revoked
RETURN count(k) AS live
