-- bells_quiet: whether an author's posts may skip their ringing job, kept in the author's mirror
-- meta (m:{a}, one slot) as `nb` (no bell-ringers, as a ringing job found in Neo4j, until the
-- time it holds, in ms), and the token `bg` that every possible new bell-ringer changes. A post
-- rings unless `nb` is there and not past (timeline_publish.lua): so anything that loses it (a
-- Redis loss, a repair that rebuilds the meta) only makes posts ring again, until a ringing job
-- finds the bells silent once more; and a mark that never came (Redis was unreachable after
-- the commit) delays a new ringer's notifications by ARGV[3] ms at most.
-- A follow with notify on, mirrored (edge.lua), sets a new token and takes `nb` away.
-- Ops (ARGV[1]):
--   'token' a ringing job starts: the token (ARGV[2] when there is none), or nil when the meta
--           is not built (such a job never sets `nb`).
--   'quiet' a ringing job found no bell-ringer: `nb` set to now + ARGV[3] ms, only if the
--           token is still ARGV[2] (no follow with notify on was mirrored since the job read it,
--           and the meta was not rebuilt); 1 when set.
-- KEYS: the author's meta m:{a}
local meta = KEYS[1]
local op = ARGV[1]
if not redis.call('HGET', meta, 'fr') then return false end
if op == 'token' then
  redis.call('HSETNX', meta, 'bg', ARGV[2])
  return redis.call('HGET', meta, 'bg')
end
if redis.call('HGET', meta, 'bg') == ARGV[2] then
  local now = redis.call('TIME')
  local until_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[3])
  redis.call('HSET', meta, 'nb', string.format('%.0f', until_ms))
  return 1
end
return 0
