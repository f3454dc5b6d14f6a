-- exclusions_install: store the members of a reader's exclusive lists, as read from Neo4j,
-- unless one of the reader's lists changed since the read (its version moved: the caller's
-- snapshot may be stale, and the next read builds it again).
-- KEYS: xl:{r} (a set: '' marks it built, then the members), xv:{r} (the version)
-- ARGV: the version read before Neo4j was, seconds to keep, members...
-- Returns 1 when stored.
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
local members = {''}
for i = 3, #ARGV do members[#members + 1] = ARGV[i] end
for start = 1, #members, 5000 do
  redis.call('SADD', KEYS[1], unpack(members, start, math.min(start + 4999, #members)))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
