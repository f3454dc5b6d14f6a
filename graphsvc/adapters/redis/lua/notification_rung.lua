-- notification_rung: a post's ringing job is done (a publish retried later does not ring its
-- bells again). One author's keys.
-- KEYS: ps:{a}; ARGV: post_id
-- Returns 1, or 0 when the post is gone.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local state = cjson.decode(raw)
state.bells = 'rung'
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(state))
return 1
