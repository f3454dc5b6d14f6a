#!lua flags=no-writes
-- Newest-first page of a hot list, strictly after the cursor (score, member).
-- KEYS: meta, list (one user)
-- ARGV: side, cursor score ('+inf' for the first page), cursor member ('' for none), count
-- Returns {0} when the side is cold, else {1, truncated (0|1), member, score, ...}.
local meta, list = KEYS[1], KEYS[2]
local side, since, after, wanted = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local bound = list_state(meta, list, side)
if not bound then return {0} end
local out = {1, bound >= 0 and 1 or 0}
local taken, from = 0, since
if after ~= '' then
  -- entries sharing the cursor's time (equal bulk-load timestamps) come in member order
  local ties = redis.call('ZRANGE', list, since, since, 'BYSCORE', 'REV', 'WITHSCORES')
  for i = 1, #ties, 2 do
    if taken < wanted and less_bytes(ties[i], after) then
      out[#out + 1] = ties[i]
      out[#out + 1] = ties[i + 1]
      taken = taken + 1
    end
  end
  from = '(' .. since
end
if taken < wanted then
  local rest = redis.call('ZRANGE', list, from, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, wanted - taken, 'WITHSCORES')
  for i = 1, #rest do out[#out + 1] = rest[i] end
end
return out
