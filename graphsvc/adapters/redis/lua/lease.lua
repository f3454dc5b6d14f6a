-- lease: renew a lease only while the caller still holds it, so a worker whose lease ran out
-- (and was taken by another) cannot extend the new holder's.
-- KEYS: the lease; ARGV: the holder's token, milliseconds from now it lasts (0: released now)
-- Returns 1 when the caller held the lease, else 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
