-- feed_claim: lease the fan-out jobs whose lease ran out (their process stopped) to the
-- caller, atomically, so two processes never resume the same job at once.
-- KEYS: {feed}:jobs (job -> lease expiry, seconds); ARGV: now, new expiry, how many
-- Returns the jobs claimed.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, job in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], job) end
return due
