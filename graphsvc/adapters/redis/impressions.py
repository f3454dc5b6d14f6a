"""How often each suggestion was shown to a user: ``<prefix>imp:{u}``, a hash target -> shows.

The hash tag is the user's (the slot of the user's mirror and suggestion-cache keys), so a
user's counts stay on one Redis Cluster node. The whole hash expires
SUGGEST_IMPRESSIONS_DAYS after the last recorded show: old shows stop counting against a
target wholesale rather than one by one (a per-field expiry would cost a timestamp each), and
a user who stops coming back leaves nothing behind. Counts are a ranking signal, not a record:
losing them (a flushed Redis) only stops the discount for a while.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.settings import Settings


class ImpressionStore:
    def __init__(self, client: Client, settings: Settings) -> None:
        self._redis = client
        self._prefix = settings.redis_prefix
        self._ttl = max(1, round(settings.suggest_impressions_days * 86_400))

    def key(self, user_id: str) -> str:
        return f"{self._prefix}imp:{{{user_id}}}"

    async def record(self, user_id: str, target_ids: Sequence[str]) -> None:
        """One more show of each target (once each as given), and the key's expiry pushed
        back, in one round trip."""
        key = self.key(user_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            for target_id in target_ids:
                pipe.hincrby(key, target_id, 1)
            pipe.expire(key, self._ttl)
            await pipe.execute()

    async def shows(self, user_id: str, target_ids: Sequence[str]) -> dict[str, int]:
        """How often each target was shown to the user (0 when never, or forgotten)."""
        if not target_ids:
            return {}
        counts = await self._redis.hmget(self.key(user_id), list(target_ids))
        return {t: int(c) if c else 0 for t, c in zip(target_ids, counts, strict=True)}
