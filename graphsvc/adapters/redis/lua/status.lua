-- Mirror one user's status into the set of inactive (suspended or spam) users, which list
-- reads filter on. Versions (the user's clock tick in Neo4j) make late or repeated writes
-- harmless: a status older than the one applied is skipped.
-- KEYS: inactive set, versions hash (both tagged {status}: one slot)
-- ARGV: user, inactive ('1' | '0'), version
local inactive, versions = KEYS[1], KEYS[2]
local user, version = ARGV[1], tonumber(ARGV[3])
local applied = tonumber(redis.call('HGET', versions, user) or '-1')
if applied >= version then return 0 end
redis.call('HSET', versions, user, ARGV[3])
if ARGV[2] == '1' then
  redis.call('SADD', inactive, user)
else
  redis.call('SREM', inactive, user)
end
return 1
