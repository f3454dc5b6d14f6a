-- timeline_filters_put: cache a reader's follow filters (the follows whose options keep some of
-- their author's posts out of its home timeline), unless the reader followed, unfollowed or
-- changed a follow's options since they were read (its follow generation moved). The field ''
-- holds the generation they are valid for; a read that finds another one builds them again.
-- KEYS: ff:{r}, fv:{r}; ARGV: the generation read before Neo4j was, seconds, author, options, ...
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], '', ARGV[1])
for i = 3, #ARGV, 2000 do
  redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 1999, #ARGV)))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
