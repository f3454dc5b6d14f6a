-- Byte order of two strings, prepended to every script: Lua's `<` follows the server's
-- locale (Redis sets LC_COLLATE from its environment), and keyset positions need the byte
-- order that ids, Python and Neo4j agree on.
local function less_bytes(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
