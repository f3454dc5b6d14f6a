-- notification_ring: add a post's `posted` notification to users' notification streams, each
-- unless one of its newest entries is the same post's (a ringing job's step run again after its
-- process stopped: the same users, the same post, moments later), so each user gets it once.
-- On a single Redis the caller passes many users per call; on a cluster, the users of one slot.
-- KEYS: nt:{u1}, nt:{u2}, ...; ARGV: author, post id, the post's time (µs), entries kept
-- (approximately), newest entries looked at for a repeat (0: none, a step that never ran)
-- Returns how many streams got it now.
local added = 0
for _, key in ipairs(KEYS) do
  local repeated = false
  local window = {}
  if ARGV[5] ~= '0' then window = redis.call('XREVRANGE', key, '+', '-', 'COUNT', ARGV[5]) end
  for _, entry in ipairs(window) do
    local fields = entry[2]
    -- fields: type, posted, author, <author>, post, <post>, at, <at> (as added below)
    if fields[4] == ARGV[1] and fields[6] == ARGV[2] then
      repeated = true
      break
    end
  end
  if not repeated then
    redis.call('XADD', key, 'MAXLEN', '~', ARGV[4], '*',
      'type', 'posted', 'author', ARGV[1], 'post', ARGV[2], 'at', ARGV[3])
    added = added + 1
  end
end
return added
