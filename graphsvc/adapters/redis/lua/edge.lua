-- One user's half of a follow or unfollow, after Neo4j committed it.
-- KEYS: meta, list, journal, stamps (one user)
-- ARGV: side, op ('+' | '-'), member, edge version, at (Neo4j's clock after the commit),
--       how the user's counts moved ('n' not at all | 'd' a numbered change | 'a' a reading),
--       the count sequence, the five counts or deltas (fr, fg, fa, ga, mu), cap,
--       journal window (microseconds), and a token ('' none) when the follow rings the user's
--       bell (a follow with notify on, followers side): the user's posts ring again
--       (bells_quiet.lua), unless its meta is not built (then it has no quiet to take back)
-- Returns: whether the list changed (0|1), and the counts' answer (apply_change: 2 = a gap)
local meta, list, journal, stamps = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local side, op, member, at, moved = ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6]
if (ARGV[15] or '') ~= '' and redis.call('EXISTS', meta) == 1 then
  redis.call('HSET', meta, 'bg', ARGV[15])
  redis.call('HDEL', meta, 'nb')
end
-- judged before the counts change: a new count must not make an empty list look lost
local loaded = list_state(meta, list, side)
local counted = 0
if moved == 'd' then
  counted = apply_change(meta, at, ARGV[7], counts_from(8), tonumber(ARGV[14]))
elseif moved == 'a' then
  refresh_counts(meta, at, ARGV[7], counts_from(8))
end
if op == '-' or not loaded then
  remember(journal, stamps, side .. op .. member, ARGV[4], at, tonumber(ARGV[14]))
end
if not loaded then return {0, counted} end
return {apply_edge(meta, list, journal, side, op, member, tonumber(ARGV[4]), tonumber(at),
                   tonumber(ARGV[13])), counted}
