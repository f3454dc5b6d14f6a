-- Forget one user's counts and lists (its next read rebuilds them), keeping a floor: the
-- newest Neo4j time the mirror had seen of it (snapshot or post-commit reading), or the time
-- given, whichever is later. A snapshot read before that time may miss writes that reached
-- the loaded lists (which journal only removals), or edges a load wrote into Neo4j past the
-- mirror, so install.lua and install_counts.lua refuse it; a fresh read is newer. The journal
-- stays, for writes in flight while the user is rebuilt.
-- A user with nothing mirrored (no counts, no list) is cold already: only the floor is set,
-- on a meta that expires after the given seconds (any snapshot read before the floor has been
-- installed or refused by then; a write or an install that reaches the meta keeps it).
-- KEYS: meta, followers list, following list (one user)
-- ARGV: floor (Neo4j time; 0: none given), seconds a floor-only meta lives
-- Returns 1 if the user had counts or a list mirrored, else 0.
local meta = KEYS[1]
local floor = tonumber(ARGV[1] or '0')
for _, value in ipairs(redis.call('HMGET', meta, 'at', 'pat', 'rs', 'gs', 'fl')) do
  if value and tonumber(value) > floor then floor = tonumber(value) end
end
local mirrored = redis.call('HEXISTS', meta, 'cs') == 1
  or redis.call('EXISTS', KEYS[2], KEYS[3]) > 0
redis.call('DEL', meta, KEYS[2], KEYS[3])
if floor > 0 then
  redis.call('HSET', meta, 'fl', string.format('%.0f', floor))
  if not mirrored and ARGV[2] then redis.call('EXPIRE', meta, ARGV[2]) end
end
if mirrored then return 1 end
return 0
