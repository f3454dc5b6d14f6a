-- Forget one user's counts and lists (its next read rebuilds them), keeping a floor: the
-- newest Neo4j time the mirror had seen of it (snapshot or post-commit reading). A snapshot
-- read before that time may miss writes that reached the loaded lists (which journal only
-- removals), so install.lua and install_counts.lua refuse it; a fresh read is newer. The
-- journal stays, for writes in flight while the user is rebuilt.
-- KEYS: meta, followers list, following list (one user)
local meta = KEYS[1]
local floor = 0
for _, value in ipairs(redis.call('HMGET', meta, 'at', 'pat', 'rs', 'gs', 'fl')) do
  if value and tonumber(value) > floor then floor = tonumber(value) end
end
redis.call('DEL', meta, KEYS[2], KEYS[3])
if floor > 0 then redis.call('HSET', meta, 'fl', string.format('%.0f', floor)) end
return 1
