-- timeline_cache_put: cache a reader's celebrity list, unless the reader followed or unfollowed
-- someone since the list was computed (its follow generation moved).
-- KEYS: fc:{r}, fv:{r}; ARGV: the generation read before computing, value, seconds
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
