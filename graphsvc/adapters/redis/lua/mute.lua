-- mute: one committed mute write of a user (the muter), mirrored in the user's mute hash.
-- Touches one user's key only. The hash holds target -> 'version|until|n' (a mute) or
-- 'version|-' (a removal), and the field '' -> the version of the snapshot it was built from
-- (absent: not built; reads build it from Neo4j first). A write the snapshot already holds
-- (its version at or below the snapshot's) is skipped; otherwise the newest version of a pair
-- wins, whatever order writes arrive in. A write to a hash not built yet is kept, and the
-- build keeps it when it is newer than its snapshot (mute_install.lua).
-- KEYS: mu:{u}
-- ARGV: target, version, entry ('version|until|n' or 'version|-')
-- Returns 1 when the entry was written, else 0.
local function version_of(entry)
  return tonumber(string.match(entry, '^([^|]+)'))
end
local version = tonumber(ARGV[2])
local built = redis.call('HGET', KEYS[1], '')
if built and version <= tonumber(built) then return 0 end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and version_of(current) >= version then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
