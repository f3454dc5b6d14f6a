"""The counters of people you may know per ranker version, and the marks that count each
attributed follow once.

- ``<prefix>pymk:{pymk}:<model>``, a hash ``<version>:<counter>`` -> count for the model
  RANKER_MODEL_NAME (``domain/ranker/online_figures`` names the counters). A handful of fields per
  version ever served: it is never trimmed, and a flushed Redis only restarts the figures.
- ``<prefix>pymkf:{pymk}:<user>:<issued>:<version>:<target>``, set once a follow carrying a
  recommendation id (what it says: user, when, version) was counted for that target, and kept
  until the id expires, after which it could count nothing anyway. A retried or repeated follow, or the
  same id replayed for the target, finds the mark and counts nothing. Follows are bounded per
  user (FOLLOWS_PER_DAY), so the marks are too.

Every key has the hash tag ``{pymk}``: the attribution script touches one slot, on a cluster
too. The served counters are queued on the pipeline of another read (``count_on``), so the
cached path of suggestions makes no round trip for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphsvc.adapters.redis.client import Client
from graphsvc.domain.ranker.online_figures import COUNTERS
from graphsvc.domain.recommendation_ids import Recommendation
from graphsvc.settings import RedisSettings, SuggestionSettings

# KEYS: the mark, the counters; ARGV: the mark's life (ms), the follows field.
# Returns 1 when the follow was counted now, 0 when it was counted before.
_COUNT_FOLLOW_ONCE = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
return 1
"""


class FeedbackCounters:
    def __init__(
        self, client: Client, redis: RedisSettings, suggestions: SuggestionSettings
    ) -> None:
        self._redis = client
        self._prefix = redis.redis_prefix
        self.key = f"{redis.redis_prefix}pymk:{{pymk}}:{suggestions.ranker_model_name}"
        self._follow_once = client.register_script(_COUNT_FOLLOW_ONCE)

    def count_on(self, pipe: Any, version: int, counter: str, n: int) -> Callable[[Any], None]:
        """Queue one counter's increment on a pipeline another read runs; what takes its
        reply (nothing to read)."""
        pipe.hincrby(self.key, f"{version}:{counter}", n)
        return lambda _: None

    async def add(self, version: int, counter: str, n: int = 1) -> None:
        await self._redis.hincrby(self.key, f"{version}:{counter}", n)

    async def count_follow_once(
        self, recommendation: Recommendation, target_id: str, life_ms: int
    ) -> bool:
        """Count a follow of ``target_id`` for the recommendation's version unless a follow
        carrying the same id was counted for it; the mark lives ``life_ms``. True when counted
        now."""
        r = recommendation
        mark = f"{self._prefix}pymkf:{{pymk}}:{r.user_id}:{r.issued_ms}:{r.version}:{target_id}"
        counted = await self._follow_once(
            keys=[mark, self.key], args=[max(1, life_ms), f"{r.version}:follows"]
        )
        return bool(counted)

    async def counts(self) -> dict[int, dict[str, int]]:
        """Every version's counters (a counter never moved is absent)."""
        found: dict[int, dict[str, int]] = {}
        for field, value in (await self._redis.hgetall(self.key)).items():
            version, _, counter = field.partition(":")
            if version.isdigit() and counter in COUNTERS:
                found.setdefault(int(version), {})[counter] = int(value)
        return found
