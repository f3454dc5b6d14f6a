-- timeline_publish: put a post in its author's posts, and decide how it reaches readers.
-- Touches one author's keys only (one cluster slot). The mode lives beside the author's posts, so a
-- post and a mode switch are atomic with each other.
-- Modes: push (ordinary: posts are pushed into followers' home timelines), pull (celebrity: author
-- posts only, readers merge it on read), draining (back to push: posts are pushed, readers still
-- pull until the drain job has pushed the author's posts into every follower's home timeline),
-- erased (the author is being erased: nothing is published).
-- Rules: a push (or draining) author with >= ENTER followers must become pull, but only once
-- readers pull it (the caller adds it to the pulled set first and calls again with SWITCH =
-- 'pull'), so no post is ever in neither place. A pull author below EXIT followers becomes
-- draining here (its posts are pushed from now on; the caller starts the drain job).
-- KEYS: author posts po:{a}, post states ps:{a}, mode fm:{a}, the mirror's meta m:{a} (counts)
-- ARGV: post_id, at (µs), member (a|post_id), post cap, ENTER, EXIT, SWITCH ('' or 'pull'),
--       the follower count when the mirror has none (an unknown user: 0), or '',
--       the post's language (or ''), '1' when it is a reblog (or ''): kept in its state, where
--       home timeline reads find them for the followers whose follow options filter them; a
--       post that is no reblog rings its author's bells (state.bells 'ringing' until its
--       ringing job is done: notification_rung.lua), unless the author's meta says it has no
--       bell-ringer (`nb`, bells_quiet.lua)
-- Returns {status, mode, extra}:
--   'counts'     the author's counts are not mirrored: build them, call again
--   'enter_pull' nothing written: make readers pull the author, call again with SWITCH
--   'conflict'   the post exists with another time (extra: that time)
--   'exists'     the same post again (extra: its state)
--   'published'  mode push or pull; extra '1' when the drain job must run; a fourth value
--                '1' when the post rings (its ringing job must run)
--   'erased'     nothing written: the author is being erased (its timeline is closed,
--                timeline_close)
local function quiet(meta)  -- no bell-ringer, as a ringing job found not long ago
  local until_ms = tonumber(redis.call('HGET', meta, 'nb') or '0')
  if until_ms == 0 then return false end
  local now = redis.call('TIME')
  return until_ms > tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
local post_id, at, member = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', KEYS[3], 'mode') == 'erased' then return {'erased', '', ''} end
local existing = redis.call('HGET', KEYS[2], post_id)
if existing then
  local state = cjson.decode(existing)
  if state.at ~= at then return {'conflict', state.mode, state.at} end
  return {'exists', state.mode, existing}
end
local followers = tonumber(redis.call('HGET', KEYS[4], 'fr') or ARGV[8])
if not followers then return {'counts', '', ''} end
local mode = redis.call('HGET', KEYS[3], 'mode') or 'push'
local drain = '0'
if mode ~= 'pull' and followers >= tonumber(ARGV[5]) then
  if ARGV[7] ~= 'pull' then return {'enter_pull', mode, ''} end
  mode = 'pull'
  redis.call('HSET', KEYS[3], 'mode', mode)
elseif mode == 'pull' and followers < tonumber(ARGV[6]) then
  mode = 'draining'
  redis.call('HSET', KEYS[3], 'mode', mode)
  drain = '1'
elseif mode == 'draining' then
  drain = '1'
end
local way = 'push'
if mode == 'pull' then way = 'pull' end
local state = {at = at, mode = way, state = 'fanning_out', followers = 0, pushed = 0}
if ARGV[9] ~= '' then state.lang = ARGV[9] end
local rings = ''
if ARGV[10] == '1' then
  state.reblog = true
elseif not quiet(KEYS[4]) then
  state.bells = 'ringing'
  rings = '1'
end
if way == 'pull' then state.state = 'done' end
redis.call('ZADD', KEYS[1], at, member)
redis.call('HSET', KEYS[2], post_id, cjson.encode(state))
local extra = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if extra > 0 then
  local prefix = #member - #post_id
  for _, old in ipairs(redis.call('ZRANGE', KEYS[1], 0, extra - 1)) do
    redis.call('HDEL', KEYS[2], string.sub(old, prefix + 1))
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, extra - 1)
end
return {'published', way, drain, rings}
