-- Install both sides of one user's mirror from a bulk load into an empty database, right after
-- every mirror key was removed and while Neo4j accepts no writes (it is down for the import):
-- there is no floor, no parked reading, no loaded list and no journal to weigh, so the
-- counts, both lists and their build state are written as install.lua would leave them, in
-- three commands instead of about twenty.
-- KEYS: meta, followers list, following list (one user)
-- ARGV: read at, count sequence, the five counts (fr, fg, fa, ga, mu), then per side (followers, following):
--       boundary score (-1 = complete), boundary member, n, then n score, member pairs
local meta, at = KEYS[1], ARGV[1]
local fields = reading(COUNTS, at, ARGV[2], counts_from(3))
local next_arg = 8
for k, side in ipairs({'r', 'g'}) do
  local list = KEYS[k + 1]
  local bound, member, n = ARGV[next_arg], ARGV[next_arg + 1], tonumber(ARGV[next_arg + 2])
  local first, last = next_arg + 3, next_arg + 2 + 2 * n
  for from = first, last, 2000 do
    local batch = {}
    for i = from, math.min(from + 1999, last) do batch[#batch + 1] = ARGV[i] end
    redis.call('ZADD', list, unpack(batch))
  end
  for _, value in ipairs({side .. 's', at, side .. 'b', bound, side .. 'm', member}) do
    fields[#fields + 1] = value
  end
  next_arg = last + 1
end
redis.call('HSET', meta, unpack(fields))
return 1
