#!lua flags=no-writes
-- Newest-first page of a hot list, strictly after the cursor (score, member), leaving out
-- inactive (suspended, spam) users.
-- KEYS: meta, list (one user), optionally the set of inactive users, and optionally then the
-- hash of privacy settings
-- ARGV: side, cursor score ('+inf' for the first page), cursor member ('' for none), count,
-- and with the privacy hash, the list's owner
-- Returns {0} when the side is cold, {2} when the inactive set is not built (the member ''
-- marks it built), else {1, truncated (0|1), member, score (an integer), ...}, or with the privacy hash
-- {1, truncated, the owner's settings (nil: the defaults), built (0|1), member, score, ...}:
-- the settings a read for a viewer checks, in the page's own round trip. Skipped inactive
-- entries do not count; the list is scanned on until `count` entries are found or it ends.
-- The set is another slot than the user's keys: on Redis Cluster it is left out (no filter
-- here) and the caller filters in a second round trip.
local meta, list, hidden = KEYS[1], KEYS[2], KEYS[3]
local side, since, after, wanted = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local bound = list_state(meta, list, side)
if not bound then return {0} end
if hidden and redis.call('SISMEMBER', hidden, '') == 0 then return {2} end
local out = {1, bound >= 0 and 1 or 0}
if KEYS[4] then
  local settings = redis.call('HMGET', KEYS[4], ARGV[5], '')
  out[3] = settings[1]
  out[4] = settings[2] and 1 or 0
end
local taken, from = 0, since

local function take(member, score)
  if taken < wanted and (not hidden or redis.call('SISMEMBER', hidden, member) == 0) then
    out[#out + 1] = member
    out[#out + 1] = tonumber(score)  -- an integer reply: the follow's microseconds, exact
    taken = taken + 1
  end
end

if after ~= '' then
  -- entries sharing the cursor's time (equal bulk-load timestamps) come in member order
  local ties = redis.call('ZRANGE', list, since, since, 'BYSCORE', 'REV', 'WITHSCORES')
  for i = 1, #ties, 2 do
    if less_bytes(ties[i], after) then take(ties[i], ties[i + 1]) end
  end
  from = '(' .. since
end
local offset = 0
while taken < wanted do
  local chunk = math.max(wanted - taken, 32)
  local rest = redis.call('ZRANGE', list, from, '-inf', 'BYSCORE', 'REV', 'LIMIT', offset, chunk,
                          'WITHSCORES')
  for i = 1, #rest, 2 do take(rest[i], rest[i + 1]) end
  if #rest < 2 * chunk then break end
  offset = offset + chunk
end
return out
