-- timeline_close: the timeline of an author being erased closes. It publishes nothing more (the
-- mode 'erased' refuses, timeline_publish), and its posts are dropped, so no read pulls them
-- and no backfill or rebuild pushes them. Every post state it keeps is marked deleting, so a
-- fan-out of the post stops at its next step (timeline_progress); the states stay until the
-- erasure forgets the author, since they name the jobs that may still be queued. Idempotent.
-- KEYS: po:{a}, ps:{a}, fm:{a}
-- Returns the ids of the posts whose states it keeps.
redis.call('HSET', KEYS[3], 'mode', 'erased')
redis.call('DEL', KEYS[1])
local ids = {}
local states = redis.call('HGETALL', KEYS[2])
for i = 1, #states, 2 do
  local state = cjson.decode(states[i + 1])
  if state.state ~= 'deleting' then
    state.state = 'deleting'
    redis.call('HSET', KEYS[2], states[i], cjson.encode(state))
  end
  ids[#ids + 1] = states[i]
end
return ids
