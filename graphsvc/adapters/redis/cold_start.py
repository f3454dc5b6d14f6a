"""Redis adapter: the cold start's charts of accounts and what the workers keep them from.

Every key shares the hash tag ``{pymk}`` (one cluster slot), so a union of buckets, a rename
and the read of both charts are single-slot commands:

- ``<prefix>{pymk}:gain:<hour>``: a sorted set per hourly bucket of the net followers each
  account gained in that hour (``domain/trending.py``); it expires once the trending window
  has passed it, so a count delivered twice is forgotten with its bucket;
- ``<prefix>{pymk}:changed``: the accounts whose popular count or state changed since the
  last refresh (a set: each is checked in Neo4j once, however often it changed);
- ``<prefix>{pymk}:popular:counts``: the most followed accounts with their follower counts
  (twice the charts' size, so one that drops out of the top still has followers behind it);
  ``<prefix>{pymk}:popular:built`` is there while the last scan is recent enough;
- ``<prefix>{pymk}:trending`` and ``<prefix>{pymk}:popular``: the charts the request path
  reads, JSON arrays of ids, in one MGET. Trending lapses after its window (a worker that
  stopped leaves no stale trend for long); popular stays until it is replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from graphsvc.adapters.redis.client import Client
from graphsvc.settings import RedisSettings


class ColdStartCharts:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self._prefix = f"{settings.redis_prefix}{{pymk}}:"
        self._changed = f"{self._prefix}changed"
        self._counts = f"{self._prefix}popular:counts"
        self._built = f"{self._prefix}popular:built"
        self._charts = [f"{self._prefix}trending", f"{self._prefix}popular"]

    def _bucket(self, hour: int) -> str:
        return f"{self._prefix}gain:{hour}"

    # -- the request path --------------------------------------------------------------------

    async def read(self) -> tuple[list[str], list[str]]:
        """The trending and the popular accounts, one round trip (empty when not made yet)."""
        trending, popular = await self._redis.mget(self._charts)
        return (orjson.loads(trending) if trending else []), (
            orjson.loads(popular) if popular else []
        )

    # -- what the event consumer counts ------------------------------------------------------

    async def count(
        self, gains: Mapping[int, Mapping[str, int]], changed: set[str], keep_seconds: int
    ) -> None:
        """Add the gains to their buckets (each kept ``keep_seconds`` past its hour's start)
        and note the changed accounts."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for hour, per_target in gains.items():
                key = self._bucket(hour)
                for target, gained in per_target.items():
                    pipe.zincrby(key, gained, target)
                pipe.expireat(key, hour * 3_600 + keep_seconds)
            if changed:
                pipe.sadd(self._changed, *sorted(changed))
            await pipe.execute()

    # -- what a refresh reads and writes -----------------------------------------------------

    async def gained(self, hours: Sequence[int], count: int) -> list[tuple[str, float]]:
        """The ``count`` accounts that gained the most over these buckets, with their gains."""
        union = f"{self._prefix}gain:window"
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zunionstore(union, [self._bucket(hour) for hour in hours])
            pipe.zrevrange(union, 0, count - 1, withscores=True)
            pipe.delete(union)
            _, top, _ = await pipe.execute()
        return [(uid, float(score)) for uid, score in top]

    async def take_changed(self, count: int) -> list[str]:
        """Up to ``count`` of the changed accounts, no longer noted as changed."""
        return list(await self._redis.spop(self._changed, count) or [])

    async def note_changed(self, user_ids: Sequence[str]) -> None:
        """Note these accounts as changed again (a refresh that failed after taking them)."""
        if user_ids:
            await self._redis.sadd(self._changed, *user_ids)

    async def popular_built(self) -> bool:
        """Whether the popular counts were built from a scan recently enough."""
        return bool(await self._redis.exists(self._built))

    async def replace_popular(
        self, counts: Sequence[tuple[str, int]], rebuild_seconds: float
    ) -> None:
        """The popular counts as a scan found them, swapped in whole (a rename)."""
        staged = f"{self._counts}:staged"
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.delete(staged)
            if counts:
                pipe.zadd(staged, dict(counts))
                # queued as a command: a cluster pipeline refuses rename() by name, though
                # both keys are in one slot
                pipe.execute_command("RENAME", staged, self._counts)
            else:
                pipe.delete(self._counts)
            pipe.set(self._built, "1", px=max(1, int(rebuild_seconds * 1000)))
            await pipe.execute()

    async def update_popular(
        self, counts: Mapping[str, int], gone: Sequence[str], kept: int
    ) -> list[tuple[str, float]]:
        """Set the follower counts of these accounts, drop those that may no longer be
        listed, keep the ``kept`` most followed; the counts kept."""
        async with self._redis.pipeline(transaction=False) as pipe:
            if counts:
                pipe.zadd(self._counts, dict(counts))
            if gone:
                pipe.zrem(self._counts, *gone)
            pipe.zremrangebyrank(self._counts, 0, -(kept + 1))
            pipe.zrevrange(self._counts, 0, -1, withscores=True)
            *_, top = await pipe.execute()
        return [(uid, float(score)) for uid, score in top]

    async def publish(
        self, trending: Sequence[str], popular: Sequence[str], trending_seconds: int
    ) -> None:
        """Store both charts for the request path."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(self._charts[0], orjson.dumps(list(trending)), ex=trending_seconds)
            pipe.set(self._charts[1], orjson.dumps(list(popular)))
            await pipe.execute()
