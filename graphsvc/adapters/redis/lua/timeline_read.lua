-- timeline_read: one page of a reader's home timeline, and what the reader's timeline needs
-- besides. Touches one reader's keys only. Marks the reader active for ACTIVE_MS (and its home
-- timeline with it; renewed hourly). A reader that was inactive has missed pushes: its home
-- timeline is dropped and the caller rebuilds it from authors' posts; pushes that land meanwhile
-- stay (the rebuild adds to them). Posts of authors the reader no longer follows are skipped when
-- the reader's following list is mirrored in full (m:{r} gs set and gb = -1); otherwise the caller
-- filters them. The celebrity list cache fc:{r} ("v|generation|c1,c2,...") is valid while v equals
-- the reader's follow generation fv:{r}; its celebrities no longer followed are dropped here.
-- KEYS: in:{r}, rd:{r}, g:{r}, m:{r}, fc:{r}, fv:{r}, rb:{r} (a rebuild is due until it is deleted)
-- ARGV: after_at ('+inf' or µs), after_member, WANT, ACTIVE_MS, SCAN_MAX
-- Returns {'rebuild'}, or {'ok', complete, exhausted, cache generation or '', the reader's
--          follow generation, n celebrities, celebrities..., member, at, member, at, ...}
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
  redis.call('SET', KEYS[7], '1', 'PX', ARGV[4])
  redis.call('DEL', KEYS[1])
  return {'rebuild'}
end
-- a rebuild that did not finish (an error, a stopped process) is done again
if redis.call('EXISTS', KEYS[7]) == 1 then return {'rebuild'} end
-- renewed at most once an hour (a write per read would cost every read an AOF append)
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) - 3600000 then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local meta = redis.call('HMGET', KEYS[4], 'gs', 'gb', 'fg')
local complete = meta[1] and tonumber(meta[2] or '-1') < 0
  and (tonumber(meta[3] or '0') == 0 or redis.call('EXISTS', KEYS[3]) == 1)
-- A short following list (a listpack up to zset-max-listpack-entries, where each ZSCORE
-- scans it) is read once into a table; a long one (a skiplist) is asked member by member.
local following = nil
local function followed(author)
  if not complete then return true end
  if not following then
    following = {}
    if redis.call('ZCARD', KEYS[3]) <= 1024 then
      for _, user in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do following[user] = true end
    else
      following = false
    end
  end
  if following == false then return redis.call('ZSCORE', KEYS[3], author) ~= false end
  return following[author] == true
end
local function author_of(member)
  return string.sub(member, 1, (string.find(member, '|', 1, true) or 0) - 1)
end

local follow_generation = redis.call('GET', KEYS[6]) or '0'
local reply = {'ok', complete and 1 or 0, 0, '', follow_generation, 0}
local cached = redis.call('GET', KEYS[5])
if cached then
  local version, generation, list = string.match(cached, '^([^|]*)|([^|]*)|(.*)$')
  if version and version == follow_generation then
    reply[4] = generation
    for celebrity in string.gmatch(list, '[^,]+') do
      if followed(celebrity) then
        reply[#reply + 1] = celebrity
        reply[6] = reply[6] + 1
      end
    end
  end
end

local want, scan_max = tonumber(ARGV[3]), tonumber(ARGV[5])
local max, after_at, after_member = ARGV[1], tonumber(ARGV[1]), ARGV[2]
local kept, scanned, chunk = 0, 0, want * 2
while kept < want and scanned < scan_max do
  local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], max, '-inf', 'WITHSCORES', 'LIMIT', scanned,
  chunk) for i = 1, #rows, 2 do
    local member, at = rows[i], rows[i + 1]
    local later = after_at and tonumber(at) == after_at and not less_bytes(member, after_member)
    if not later and kept < want and followed(author_of(member)) then
      reply[#reply + 1] = member
      reply[#reply + 1] = at
      kept = kept + 1
    end
  end
  scanned = scanned + #rows / 2
  if #rows / 2 < chunk then
    if kept < want then reply[3] = 1 end -- else rows this chunk did not hand out may remain
    break
  end
end
return reply
