-- Shared helpers, prepended to every mirror script. A script touches the keys of ONE user
-- only (they share the {user} hash tag), so the same code runs on Redis Cluster.
--
-- meta hash:  fr, fg = exact follower / following counts; fa, ga = the same of active users
--             only; mu = active friends (mutual follows); cs = the user's count sequence in
--             Neo4j they are exact as of: every change of a user's counts is numbered there,
--             under the user's lock, and the mirror adds change cs + 1 only to counts as of cs,
--             once. A change that arrives early is parked (~<cs> = its five deltas, pn = how
--             many are parked) until the one before it comes, or until a reading (counts read
--             under the user's lock, which numbers the reading itself) replaces the counts.
--             A gap is reported to the writer, which has the user's counts read anew.
--             at = the newest Neo4j time a reading or a write of the user carried (the floor a
--             drop keeps). Only a reading creates counts: changes and readings that reach cold
--             counts are parked (~<cs>; pcs, pat, pfr, ...) for the next install to weigh (a
--             snapshot read before a change may be installed after it).
--             Per side S (r = followers, g = following):
--             Ss = when Neo4j read the snapshot the list was built from (present = loaded),
--             Sb, Sm = (score, member) of the newest entry NOT in the list; Sb = -1: complete.
-- list zset:  member = the other user, score = follow time in microseconds.
-- journal:    zset of S..op..member -> edge version; stamps: the same members -> `at` of the
--             write (Neo4j's clock read while the write held its users' locks, or after its
--             commit). Removals always, additions while the list is cold; pruned after the
--             window.
-- What the mirror installs is read under the same locks, its time read once it holds them
-- (snapshots/number_reads): a write whose `at` is older than a list's snapshot committed
-- before the snapshot was read, so the snapshot already reflects it: it is skipped. That fence survives FLUSHALL or a
-- dropped mirror, where journals and tombstones may be gone.
-- Versions order the writes to ONE edge: they come from the follower's hybrid logical clock in
-- Neo4j (the follower is locked by every change to its edges), so for an edge they are unique
-- and grow in commit order. The newest version of an edge wins, whatever order writes arrive in.
-- Numbers above 2^47 lose digits in Lua's tostring: format them with '%.0f' or pass the
-- original string.

local function count_field(side)
  if side == 'r' then return 'fr' end
  return 'fg'
end

-- nil when the side is cold (never built, or its list was lost), else boundary score, count
local function list_state(meta, list, side)
  local state = redis.call('HMGET', meta, side .. 's', side .. 'b', count_field(side))
  if not state[1] then return nil end
  local bound, count = tonumber(state[2] or '-1'), tonumber(state[3] or '0')
  if bound < 0 and count > 0 and redis.call('EXISTS', list) == 0 then return nil end
  return bound, count
end

-- true when (score, member) is newer than the list's boundary, i.e. belongs in the hot list
local function above_boundary(meta, side, score, member)
  local b = redis.call('HMGET', meta, side .. 'b', side .. 'm')
  local bound = tonumber(b[1] or '-1')
  if bound < 0 then return true end
  if score ~= bound then return score > bound end
  return less_bytes(b[2] or '', member)
end

-- a count sequence (a creation time in microseconds, and up) as Redis keeps it, every digit
local function digits(number)
  return string.format('%.0f', number)
end

local COUNTS = {'fr', 'fg', 'fa', 'ga', 'mu'}
local PARKED = {'pfr', 'pfg', 'pfa', 'pga', 'pmu'}
local MOST_PARKED = 64  -- changes parked at once, behind a gap or for cold counts

-- the field, value pairs of a reading: `at`, `cs`, then the counts in COUNTS order
local function reading(fields, at, cs, counts)
  local out = {'pat', at, 'pcs', cs}
  if fields == COUNTS then out[1], out[3] = 'at', 'cs' end
  for i, name in ipairs(fields) do
    out[#out + 1] = name
    out[#out + 1] = counts[i]
  end
  return out
end

-- a snapshot read before the user was dropped (drop.lua) must not be installed
local function below_floor(meta, at)
  local floor = redis.call('HGET', meta, 'fl')
  return floor and tonumber(at) < tonumber(floor)
end

local function note_time(meta, at)
  if tonumber(at) > tonumber(redis.call('HGET', meta, 'at') or '-1') then
    redis.call('HSET', meta, 'at', at)
  end
end

local function add_counts(meta, delta)
  for i, name in ipairs(COUNTS) do
    if tonumber(delta[i]) ~= 0 then redis.call('HINCRBY', meta, name, delta[i]) end
  end
end

-- parked changes up to `cs` are in the counts now; those after it are applied in turn
local function drain(meta, cs)
  if tonumber(redis.call('HGET', meta, 'pn') or '0') == 0 then return end
  local left = 0
  for _, field in ipairs(redis.call('HKEYS', meta)) do
    if field:sub(1, 1) == '~' then
      if tonumber(field:sub(2)) <= cs then redis.call('HDEL', meta, field) else left = left + 1 end
    end
  end
  while left > 0 do
    local field = '~' .. digits(cs + 1)
    local delta = redis.call('HGET', meta, field)
    if not delta then break end
    local values = {}
    for value in delta:gmatch('%S+') do values[#values + 1] = value end
    add_counts(meta, values)
    redis.call('HDEL', meta, field)
    cs, left = cs + 1, left - 1
  end
  redis.call('HSET', meta, 'cs', digits(cs), 'pn', left)
end

-- counts = array of the values in COUNTS order, exact as of count sequence `cs`
local function set_counts(meta, at, cs, counts)
  -- a reading that reached the user while its counts were cold was parked: the later wins
  local pending = redis.call('HMGET', meta, 'pcs', 'pat', unpack(PARKED))
  if pending[1] then
    if tonumber(pending[1]) > tonumber(cs) and pending[#pending] then
      cs, at, counts = pending[1], pending[2], {unpack(pending, 3)}
    end
    redis.call('HDEL', meta, 'pcs', 'pat', unpack(PARKED))
  end
  local current = tonumber(redis.call('HGET', meta, 'cs') or '-1')
  if tonumber(cs) > current then
    redis.call('HSET', meta, unpack(reading(COUNTS, at, cs, counts)))
    drain(meta, tonumber(cs))
  end
  note_time(meta, at)
  -- counts in a meta that had none: it was fresh or floor-only, and a floor-only meta expires
  -- (drop.lua); one with counts keeps any expiry it has (an erased user's)
  if current < 0 then redis.call('PERSIST', meta) end
end

-- a reading of a user whose counts are cold: kept aside, not served, until a snapshot is
-- installed (a late reading after FLUSHALL must not become the served count on its own)
local function park_counts(meta, at, cs, counts)
  if tonumber(cs) > tonumber(redis.call('HGET', meta, 'pcs') or '-1') then
    redis.call('HSET', meta, unpack(reading(PARKED, at, cs, counts)))
  end
  redis.call('PERSIST', meta)  -- parked only while counts are cold: fresh or floor-only
end

-- a reading under the user's lock: replaces loaded counts if later, else is parked
local function refresh_counts(meta, at, cs, counts)
  if redis.call('HEXISTS', meta, 'cs') == 1 then
    set_counts(meta, at, cs, counts)
  else
    park_counts(meta, at, cs, counts)
  end
end

-- park change `cs`, keeping the newest MOST_PARKED: the oldest are the first a reading covers
local function park_change(meta, cs, delta)
  local parked = tonumber(redis.call('HGET', meta, 'pn') or '0')
  if parked >= MOST_PARKED then
    local oldest
    for _, field in ipairs(redis.call('HKEYS', meta)) do
      if field:sub(1, 1) == '~' and (not oldest or tonumber(field:sub(2)) < oldest) then
        oldest = tonumber(field:sub(2))
      end
    end
    if not oldest or oldest >= cs then return end
    redis.call('HDEL', meta, '~' .. digits(oldest))
    parked = parked - 1
  end
  if redis.call('HSETNX', meta, '~' .. digits(cs), table.concat(delta, ' ')) == 1 then
    redis.call('HSET', meta, 'pn', parked + 1)
  end
end

-- numbered change `cs` of the counts (delta = five signed numbers): 1 applied, 0 already in
-- the counts, 2 parked behind a gap, 3 parked for cold counts (the reading that builds them
-- may have been read before it); a cold meta with nothing else to keep goes after `window`
local function apply_change(meta, at, cs, delta, window)
  local current = redis.call('HGET', meta, 'cs')
  if not current then
    -- counts without a sequence were mirrored before changes were numbered: a read rebuilds
    redis.call('HDEL', meta, unpack(COUNTS))
    park_change(meta, tonumber(cs), delta)
    if redis.call('PTTL', meta) == -1 and redis.call('HEXISTS', meta, 'pcs') == 0 then
      redis.call('PEXPIRE', meta, math.ceil(window / 1000))
    end
    return 3
  end
  current, cs = tonumber(current), tonumber(cs)
  note_time(meta, at)
  if cs <= current then return 0 end
  if cs > current + 1 then
    park_change(meta, cs, delta)
    return 2
  end
  add_counts(meta, delta)
  redis.call('HSET', meta, 'cs', digits(cs))
  drain(meta, cs)
  return 1
end

-- the five counts passed from ARGV[first] on (or from args[first], a script's own table)
local function counts_from(first, args)
  local a = args or ARGV
  return {a[first], a[first + 1], a[first + 2], a[first + 3], a[first + 4]}
end

-- keep the newest `cap` entries; the boundary moves up to the newest one dropped
local function trim(meta, list, side, cap)
  local over = redis.call('ZCARD', list) - cap
  if over <= 0 then return end
  local cut = redis.call('ZRANGE', list, 0, over - 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYRANK', list, 0, over - 1)
  local member, score = cut[#cut - 1], cut[#cut]
  if above_boundary(meta, side, tonumber(score), member) then
    redis.call('HSET', meta, side .. 'b', score, side .. 'm', member)
  end
end

local function remember(journal, stamps, key, version, at, window)
  local previous = redis.call('ZSCORE', journal, key)
  if not previous or tonumber(previous) < tonumber(version) then
    redis.call('ZADD', journal, version, key)
    redis.call('ZADD', stamps, at, key)
  end
  -- the horizon comes from Neo4j's clock (`at`), never from a follower's clock
  local horizon = '(' .. string.format('%.0f', tonumber(at) - window)
  redis.call('ZREMRANGEBYSCORE', journal, '-inf', horizon)
  redis.call('ZREMRANGEBYSCORE', stamps, '-inf', horizon)
  for _, key in ipairs({journal, stamps}) do
    redis.call('PEXPIRE', key, math.ceil(window / 1000))
  end
end

-- one edge's state applied to a loaded list (the caller checks); the newest version wins
local function apply_edge(meta, list, journal, side, op, member, version, at, cap)
  if at < tonumber(redis.call('HGET', meta, side .. 's')) then return 0 end
  local current = tonumber(redis.call('ZSCORE', list, member) or '-1')
  if op == '-' then
    if current >= 0 and current < version then
      redis.call('ZREM', list, member)
      return 1
    end
    return 0
  end
  if current >= version then return 0 end
  local removed = redis.call('ZSCORE', journal, side .. '-' .. member)
  if removed and tonumber(removed) >= version then return 0 end
  if not above_boundary(meta, side, version, member) then return 0 end
  redis.call('ZADD', list, string.format('%.0f', version), member)
  trim(meta, list, side, cap)
  return 1
end

-- One user's half of a follow or unfollow, after Neo4j committed it (edge.lua, edges.lua).
-- a: side, op ('+' | '-'), member, edge version, at (the write's time: the journal's stamps),
--    how the user's counts moved ('n' not at all | 'd' a numbered change | 'a' a reading),
--    the count sequence, the five counts or deltas (fr, fg, fa, ga, mu), cap,
--    journal window (microseconds), and a token ('' none) when the follow rings the user's
--    bell (a follow with notify on, followers side): the user's posts ring again
--    (bells_quiet.lua), unless its meta is not built (then it has no quiet to take back)
-- Returns: whether the list changed (0|1), and the counts' answer (apply_change: 2 = a gap)
local function mirror_half(meta, list, journal, stamps, a)
  local side, op, member, at, moved = a[1], a[2], a[3], a[5], a[6]
  if (a[15] or '') ~= '' and redis.call('EXISTS', meta) == 1 then
    redis.call('HSET', meta, 'bg', a[15])
    redis.call('HDEL', meta, 'nb')
  end
  -- judged before the counts change: a new count must not make an empty list look lost
  local loaded = list_state(meta, list, side)
  local counted = 0
  if moved == 'd' then
    counted = apply_change(meta, at, a[7], counts_from(8, a), tonumber(a[14]))
  elseif moved == 'a' then
    refresh_counts(meta, at, a[7], counts_from(8, a))
  end
  if op == '-' or not loaded then
    remember(journal, stamps, side .. op .. member, a[4], at, tonumber(a[14]))
  end
  if not loaded then return {0, counted} end
  return {apply_edge(meta, list, journal, side, op, member, tonumber(a[4]), tonumber(at),
                     tonumber(a[13])), counted}
end
