-- One user's half of a follow or unfollow, after Neo4j committed it.
-- KEYS: meta, list, journal (one user)
-- ARGV: side, op ('+' | '-'), member, edge version, counts read at, followers, following,
--       cap, journal window (microseconds)
local meta, list, journal = KEYS[1], KEYS[2], KEYS[3]
local side, op, member = ARGV[1], ARGV[2], ARGV[3]
set_counts(meta, ARGV[5], ARGV[6], ARGV[7])
if op == '-' or not redis.call('HGET', meta, side .. 's') then
  remember(journal, side .. op .. member, ARGV[4], tonumber(ARGV[9]))
end
return apply_edge(meta, list, journal, side, op, member, tonumber(ARGV[4]), tonumber(ARGV[8]))
