-- mute_install: build a user's mute hash from a Neo4j snapshot (see mute.lua for its form).
-- Touches one user's key only. A snapshot older than the one the hash was built from is
-- refused (a slower build must not undo a newer one). Entries at or below the snapshot's
-- version are the snapshot's to decide (removals and expired mutes go with them); newer ones
-- are writes committed after the snapshot was read, and stay.
-- KEYS: mu:{u}
-- ARGV: snapshot version, then target, entry, target, entry, ...
-- Returns 1 when installed, 0 when refused.
local function version_of(entry)
  return tonumber(string.match(entry, '^([^|]+)'))
end
local snapshot = tonumber(ARGV[1])
local built = redis.call('HGET', KEYS[1], '')
if built and tonumber(built) > snapshot then return 0 end
local newer = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local target = all[i]
  if target ~= '' then
    if version_of(all[i + 1]) <= snapshot then
      redis.call('HDEL', KEYS[1], target)
    else
      newer[target] = true
    end
  end
end
for i = 2, #ARGV, 2 do
  if not newer[ARGV[i]] then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], '', ARGV[1])
return 1
