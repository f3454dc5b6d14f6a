-- timeline_push: put posts into the home timelines of readers who read their timeline recently.
-- A reader is active while its mark rd:{r} exists (each timeline read renews it for
-- TIMELINE_ACTIVE_DAYS); an inactive reader gets nothing and is rebuilt on its next read.
-- Each home timeline keeps its newest CAP posts (trimmed on every push). A new home timeline takes
-- the mark's time to live, so the home timeline of a reader who stops reading goes with its mark.
-- Idempotent (ZADD): a fan-out or backfill that runs twice changes nothing.
-- On a single Redis the caller passes many readers per call; on a cluster, the readers of
-- one slot (their keys share the {reader} tag).
-- KEYS: home timeline in:{r1}, mark rd:{r1}, home timeline in:{r2}, mark rd:{r2}, ...
-- ARGV: CAP, then at, member pairs
-- Returns {readers reached, posts added}
local cap = tonumber(ARGV[1])
local entries = {}
for i = 2, #ARGV do entries[#entries + 1] = ARGV[i] end
local reached, added = 0, 0
for k = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[k + 1]) == 1 then
    local new = redis.call('ZADD', KEYS[k], unpack(entries))
    reached = reached + 1
    added = added + new
    local size = redis.call('ZCARD', KEYS[k])
    if size > cap then
      redis.call('ZREMRANGEBYRANK', KEYS[k], 0, size - cap - 1)
    elseif size == new then
      redis.call('PEXPIRE', KEYS[k], math.max(redis.call('PTTL', KEYS[k + 1]), 1))
    end
  end
end
return {reached, added}
