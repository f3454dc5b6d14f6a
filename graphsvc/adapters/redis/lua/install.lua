-- Build one side of a user's mirror from a Neo4j snapshot, unless a loaded list is there.
-- The journal is replayed on top: writes that reached Redis while the list was cold may be
-- newer than the snapshot, and the newest version of each edge wins.
-- KEYS: meta, list, journal, stamps (one user)
-- ARGV: side, snapshot read at, count sequence, the five counts (fr, fg, fa, ga, mu), cap,
--       boundary score (-1 = complete), boundary member, then score, member pairs
local meta, list, journal, stamps = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local side, at, cap = ARGV[1], ARGV[2], tonumber(ARGV[9])
if below_floor(meta, at) then return 0 end
set_counts(meta, at, ARGV[3], counts_from(4))
if list_state(meta, list, side) then return 0 end
redis.call('DEL', list)
for first = 12, #ARGV, 2000 do
  local batch = {}
  for i = first, math.min(first + 1999, #ARGV) do batch[#batch + 1] = ARGV[i] end
  redis.call('ZADD', list, unpack(batch))
end
redis.call('HSET', meta, side .. 's', at, side .. 'b', ARGV[10], side .. 'm', ARGV[11])
-- writes stamped before the snapshot are already in it; later ones may not be
local later = redis.call('ZRANGE', stamps, at, '+inf', 'BYSCORE', 'WITHSCORES')
for i = 1, #later, 2 do
  local key = later[i]
  local version = redis.call('ZSCORE', journal, key)
  if version and key:sub(1, 1) == side then
    apply_edge(meta, list, journal, side, key:sub(2, 2), key:sub(3), tonumber(version),
               tonumber(later[i + 1]), cap)
  end
end
trim(meta, list, side, cap)
return 1
