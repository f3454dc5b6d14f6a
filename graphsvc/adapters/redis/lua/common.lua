-- Shared helpers, prepended to every mirror script. A script touches the keys of ONE user
-- only (they share the {user} hash tag), so the same code runs on Redis Cluster.
--
-- meta hash:  fr, fg = exact follower / following counts; fa, ga = the same of active users
--             only; mu = active friends (mutual follows); at = when Neo4j read them
--             (microseconds of Neo4j's clock): a reading taken later replaces one taken earlier.
--             Only a snapshot creates counts; writes refresh counts that exist, or park
--             theirs (pat, pfr, pfg, ...) for the next snapshot install to weigh.
--             Per side S (r = followers, g = following):
--             Ss = when Neo4j read the snapshot the list was built from (present = loaded),
--             Sb, Sm = (score, member) of the newest entry NOT in the list; Sb = -1: complete.
-- list zset:  member = the other user, score = follow time in microseconds.
-- journal:    zset of S..op..member -> edge version; stamps: the same members -> `at` of the
--             write (its counts were read after its commit, so it committed before `at`).
--             Removals always, additions while the list is cold; pruned after the window.
-- A write whose `at` is older than a list's snapshot committed before the snapshot was read,
-- so the snapshot already reflects it: it is skipped. That fence survives FLUSHALL or a
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

local COUNTS = {'fr', 'fg', 'fa', 'ga', 'mu'}
local PARKED = {'pfr', 'pfg', 'pfa', 'pga', 'pmu'}

-- the field, value pairs of a reading given as `at` followed by the counts in COUNTS order
local function reading(fields, at, counts)
  local out = {'pat', at}
  if fields == COUNTS then out[1] = 'at' end
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

-- counts = array of the values in COUNTS order
local function set_counts(meta, at, counts)
  -- a write that reached the user while its counts were cold left its reading aside (pending);
  -- whichever reading is later wins
  local pending = redis.call('HMGET', meta, 'pat', unpack(PARKED))
  if pending[1] then
    if tonumber(pending[1]) > tonumber(at) and pending[#pending] then
      at, counts = pending[1], {unpack(pending, 2)}
    end
    redis.call('HDEL', meta, 'pat', unpack(PARKED))
  end
  local current = tonumber(redis.call('HGET', meta, 'at') or '-1')
  if tonumber(at) >= current then
    redis.call('HSET', meta, unpack(reading(COUNTS, at, counts)))
  end
  -- counts in a meta that had none: it was fresh or floor-only, and a floor-only meta expires
  -- (drop.lua); one with counts keeps any expiry it has (an erased user's)
  if current < 0 then redis.call('PERSIST', meta) end
end

-- counts of a write to a user whose counts are cold: kept aside, not served, until a snapshot
-- is installed (a late write after FLUSHALL must not become the served count on its own)
local function park_counts(meta, at, counts)
  local parked = tonumber(redis.call('HGET', meta, 'pat') or '-1')
  if tonumber(at) > parked then
    redis.call('HSET', meta, unpack(reading(PARKED, at, counts)))
  end
  redis.call('PERSIST', meta)  -- parked only while counts are cold: fresh or floor-only
end

-- a reading from after a write's commit: refreshes loaded counts, else is parked
local function refresh_counts(meta, at, counts)
  if redis.call('HEXISTS', meta, 'at') == 1 then
    set_counts(meta, at, counts)
  else
    park_counts(meta, at, counts)
  end
end

-- the five counts passed from ARGV[first] on
local function counts_from(first)
  return {ARGV[first], ARGV[first + 1], ARGV[first + 2], ARGV[first + 3], ARGV[first + 4]}
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
