-- A batch's halves of follows and unfollows, in order, each as edge.lua would apply it: one
-- call for the many users of a batch, on a single Redis only (the keys span users' slots; a
-- cluster runs edge.lua per half).
-- KEYS: per half, meta, list, journal, stamps (of that half's user)
-- ARGV: per half, mirror_half's fifteen arguments (common.lua)
-- Returns: per half, the counts' answer (apply_change: 2 = a gap)
local answers = {}
for half = 1, #KEYS / 4 do
  local k, first = (half - 1) * 4, (half - 1) * 15
  local a = {}
  for n = 1, 15 do a[n] = ARGV[first + n] end
  answers[half] = mirror_half(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], a)[2]
end
return answers
