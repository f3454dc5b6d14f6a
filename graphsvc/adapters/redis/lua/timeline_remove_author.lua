-- timeline_remove_author: drop every post of one author from one reader's home timeline (an
-- unfollow, a block). O(home timeline size), at most TIMELINE_READER_CAP. Idempotent.
-- KEYS: in:{r}; ARGV: author
-- Returns how many posts went.
local prefix = ARGV[1] .. '|'
local gone = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(member, 1, #prefix) == prefix then gone[#gone + 1] = member end
end
if #gone > 0 then redis.call('ZREM', KEYS[1], unpack(gone)) end
return #gone
