-- timeline_progress: a fan-out job's progress on its post, unless the post was deleted meanwhile
-- (then the job stops). One author's keys.
-- KEYS: ps:{a}; ARGV: post_id, state, followers walked (+), readers reached (+)
-- Returns 1, or 0 when the post is gone or being deleted.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local state = cjson.decode(raw)
if state.state == 'deleting' then return 0 end
state.state = ARGV[2]
state.followers = state.followers + tonumber(ARGV[3])
state.pushed = state.pushed + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(state))
return 1
