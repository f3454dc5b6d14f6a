"""How often each suggestion was shown to a user, and which suggestions were served to it.

- ``<prefix>imp:{u}``, a hash target -> shows. The whole hash expires
  SUGGEST_IMPRESSIONS_DAYS after the last recorded show: old shows stop counting against a
  target wholesale rather than one by one (a per-field expiry would cost a timestamp each), and
  a user who stops coming back leaves nothing behind. It holds at most SUGGEST_IMPRESSIONS_MAX
  targets (``record``).
- ``<prefix>sgs:{u}``, a sorted set target -> when it was last served (ms): the suggestions
  the user was served in the last SUGGEST_SERVED_SECONDS, the newest SERVED_KEPT of them. A
  show is counted only for a target in it, so shows of made-up ids count nothing and store
  nothing.

The hash tag is the user's (the slot of the user's mirror and suggestion-cache keys), so a
user's keys stay on one Redis Cluster node and each script touches one slot. Counts are a
ranking signal, not a record: losing them (a flushed Redis) only stops the discount for a
while.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from graphsvc.adapters.redis.client import Client
from graphsvc.domain.impressions import SERVED_KEPT
from graphsvc.settings import BoundSettings, RedisSettings, SuggestionSettings

# Queues one more command on a pipeline, and gives what takes its reply: pipe -> (reply -> None).
Alongside = Callable[[Any], Callable[[Any], None]]

# KEYS: imp:{u}, sgs:{u}; ARGV: cap, ttl (s), served since (ms), then the distinct targets.
# Returns {not served, no room, {the targets counted}}.
_RECORD = """
local cap, ttl, since = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local function served(id)
  local at = redis.call('ZSCORE', KEYS[2], id)
  return at and tonumber(at) >= since
end
local counted, unserved, full, pruned = {}, 0, 0, false
for i = 4, #ARGV do
  local id = ARGV[i]
  if not served(id) then
    unserved = unserved + 1
  else
    local known = redis.call('HEXISTS', KEYS[1], id) == 1
    if not known and not pruned and redis.call('HLEN', KEYS[1]) >= cap then
      pruned = true  -- room for a served target: forget the targets no longer served
      for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
        if not served(field) then redis.call('HDEL', KEYS[1], field) end
      end
    end
    if known or redis.call('HLEN', KEYS[1]) < cap then
      redis.call('HINCRBY', KEYS[1], id, 1)
      counted[#counted + 1] = id
    else
      full = full + 1
    end
  end
end
if #counted > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return {unserved, full, counted}
"""


class ImpressionStore:
    def __init__(
        self,
        client: Client,
        redis: RedisSettings,
        suggestions: SuggestionSettings,
        bounds: BoundSettings,
    ) -> None:
        self._redis = client
        self._prefix = redis.redis_prefix
        self._ttl = max(1, round(suggestions.suggest_impressions_days * 86_400))
        self._served_ms = bounds.suggest_served_seconds * 1_000
        self._cap = bounds.suggest_impressions_max
        self._record = client.register_script(_RECORD)

    def key(self, user_id: str) -> str:
        return f"{self._prefix}imp:{{{user_id}}}"

    def served_key(self, user_id: str) -> str:
        return f"{self._prefix}sgs:{{{user_id}}}"

    async def served(self, user_id: str, target_ids: Sequence[str]) -> None:
        """Remember that these targets were just served to the user (one round trip)."""
        if not target_ids:
            return
        now = time.time_ns() // 1_000_000
        key = self.served_key(user_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, dict.fromkeys(target_ids, now))
            pipe.zremrangebyscore(key, "-inf", now - self._served_ms - 1)
            pipe.zremrangebyrank(key, 0, -SERVED_KEPT - 1)
            pipe.pexpire(key, self._served_ms)
            await pipe.execute()

    async def record(self, user_id: str, target_ids: Sequence[str]) -> tuple[list[str], int, int]:
        """One more show of each target that was served to the user (each once as given),
        and the key's expiry pushed back, in one script: (the targets counted, how many not
        served, how many found no room)."""
        since = time.time_ns() // 1_000_000 - self._served_ms
        keys = [self.key(user_id), self.served_key(user_id)]
        unserved, full, counted = await self._record(
            keys=keys, args=[self._cap, self._ttl, since, *target_ids]
        )
        return list(counted), int(unserved), int(full)

    async def shows(
        self, user_id: str, target_ids: Sequence[str], *alongside: Alongside
    ) -> dict[str, int]:
        """How often each target was shown to the user (0 when never, or forgotten).
        Each of ``alongside`` queues one more command on the same round trip (a pipeline),
        and reads its own reply."""
        if not target_ids:
            return {}
        if not alongside:
            counts = await self._redis.hmget(self.key(user_id), list(target_ids))
        else:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hmget(self.key(user_id), list(target_ids))
                takes = [queue(pipe) for queue in alongside]
                counts, *others = await pipe.execute()
                for take, other in zip(takes, others, strict=True):
                    take(other)
        return {t: int(c) if c else 0 for t, c in zip(target_ids, counts, strict=True)}

    async def forget(self, user_id: str) -> None:
        """An erased user's counts and served suggestions go (a later user with the id starts
        afresh)."""
        await self._redis.unlink(self.key(user_id), self.served_key(user_id))
