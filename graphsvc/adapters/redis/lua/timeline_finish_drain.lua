-- timeline_finish_drain: draining -> push, once the drain job has pushed the author's posts
-- into every active follower's home timeline. Nothing if the author is no longer draining (it
-- became a celebrity again meanwhile).
-- KEYS: fm:{a}. Returns 1 when switched.
if redis.call('HGET', KEYS[1], 'mode') ~= 'draining' then return 0 end
redis.call('HSET', KEYS[1], 'mode', 'push')
return 1
