-- Mirror one user's privacy settings, which every read for a viewer checks. Only settings off
-- their defaults are kept (the compact form of domain/privacy.py); versions (the user's clock
-- tick in Neo4j) make late or repeated writes harmless: settings older than those applied are
-- skipped, unless forced (a repair that takes Neo4j's word).
-- KEYS: settings hash, versions hash (both tagged {privacy}: one slot)
-- ARGV: user, settings ('' for the defaults), version, force ('1' | '0')
local settings, versions = KEYS[1], KEYS[2]
local user, version = ARGV[1], tonumber(ARGV[3])
local applied = tonumber(redis.call('HGET', versions, user) or '-1')
if ARGV[4] ~= '1' and applied >= version then return 0 end
redis.call('HSET', versions, user, ARGV[3])
if ARGV[2] == '' then
  redis.call('HDEL', settings, user)
else
  redis.call('HSET', settings, user, ARGV[2])
end
return 1
