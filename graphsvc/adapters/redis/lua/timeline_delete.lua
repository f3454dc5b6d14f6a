-- timeline_delete: take a post out of its author's posts and mark it deleting (a running
-- fan-out of it stops at its next batch; the removal job then clears the home timelines).
-- KEYS: po:{a}, ps:{a}; ARGV: post_id, member
-- Returns {1, at} when the post was known, {0, ''} otherwise.
local raw = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[2])
if not raw then return {0, ''} end
local state = cjson.decode(raw)
state.state = 'deleting'
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(state))
return {1, state.at}
