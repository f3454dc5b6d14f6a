-- One user's half of a follow or unfollow, after Neo4j committed it.
-- KEYS: meta, list, journal, stamps (one user)
-- ARGV: side, op ('+' | '-'), member, edge version, counts read at, the five counts
--       (fr, fg, fa, ga, mu), cap, journal window (microseconds)
local meta, list, journal, stamps = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local side, op, member, at = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
-- judged before the counts change: a new count must not make an empty list look lost
local loaded = list_state(meta, list, side)
refresh_counts(meta, at, counts_from(6))
if op == '-' or not loaded then
  remember(journal, stamps, side .. op .. member, ARGV[4], at, tonumber(ARGV[12]))
end
if not loaded then return 0 end
return apply_edge(meta, list, journal, side, op, member, tonumber(ARGV[4]), tonumber(at),
                  tonumber(ARGV[11]))
