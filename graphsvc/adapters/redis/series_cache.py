"""The closed buckets of growth series, cached: per user, list and width, a hash of bucket
start -> "gained:lost" (zeros included: a bucket known empty is no reason to read again).

Only closed buckets are put (ended before the changes' settle line: nothing can commit into
them any more), so the cache can only be stale by a history rewritten since, an erased user's
follows, for at most SERIES_CACHE_SECONDS: an entry expires that long after it was started,
however often it is read, which also bounds its size by the buckets of that time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.domain.model import Side
from graphsvc.settings import ChangeSettings, RedisSettings


class SeriesCache:
    def __init__(self, client: Client, redis: RedisSettings, settings: ChangeSettings) -> None:
        self._redis = client
        self._prefix = redis.redis_prefix
        self._ttl = settings.series_cache_seconds

    def _key(self, side: Side, user_id: str, width: int) -> str:
        return f"{self._prefix}series:{{{user_id}}}:{side.value}:{width}"

    async def get(
        self, side: Side, user_id: str, width: int, starts: Sequence[int]
    ) -> dict[int, tuple[int, int]]:
        """The cached buckets among ``starts``."""
        if not starts or self._ttl <= 0:
            return {}
        found = await self._redis.hmget(self._key(side, user_id, width), [str(s) for s in starts])
        cached = {}
        for start, value in zip(starts, found, strict=True):
            if value is not None:
                gained, _, lost = value.partition(":")
                cached[start] = (int(gained), int(lost))
        return cached

    async def put(
        self, side: Side, user_id: str, width: int, buckets: Mapping[int, tuple[int, int]]
    ) -> None:
        if not buckets or self._ttl <= 0:
            return
        key = self._key(side, user_id, width)
        fields = {str(start): f"{g}:{lost}" for start, (g, lost) in buckets.items()}
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping=fields)
            # the first put sets the expiry and later ones leave it: the whole entry goes
            # SERIES_CACHE_SECONDS after it was started, however often it is read
            pipe.expire(key, max(1, round(self._ttl)), nx=True)
            await pipe.execute()
