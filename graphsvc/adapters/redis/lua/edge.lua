-- One user's half of a follow or unfollow, after Neo4j committed it (mirror_half, common.lua).
-- KEYS: meta, list, journal, stamps (one user)
-- ARGV: mirror_half's fifteen arguments
-- Returns: whether the list changed (0|1), and the counts' answer (apply_change: 2 = a gap)
return mirror_half(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV)
