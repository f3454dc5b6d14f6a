"""Redis adapter: the write-behind buffer of interactions, and the suggestion cache.

Interactions arrive far more often than follows. An accepted batch is one entry of a Redis
stream (appended with AOF on, so it survives a restart of the service); a flusher aggregates
entries per pair and writes them to Neo4j, which records the last entry applied in the same
transaction (exactly once), and then trims the stream.

Suggestions are cached per user with a short TTL. A write that changes a user's suggestions
bumps the user's generation; a computation that started before the bump cannot store its
(stale) answer after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
import redis.asyncio as aioredis

from graphsvc.settings import Settings

# An event as buffered: actor, target, weight, time (µs since the epoch).
Event = tuple[str, str, float, int]

_PUT_IF_CURRENT = """
local current = redis.call('GET', KEYS[2]) or '0'
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
"""


@dataclass(frozen=True, slots=True)
class BufferedBatch:
    entry_id: str
    events: list[Event]


class InteractionBuffer:
    def __init__(self, client: aioredis.Redis, settings: Settings) -> None:
        self._redis = client
        self._stream = f"{settings.redis_prefix}ix"

    async def append(self, events: Sequence[Event]) -> str:
        """Buffer one accepted batch; returns its entry id. Once this returns, the batch is
        in Redis (and its append-only file)."""
        return await self._redis.xadd(self._stream, {"e": orjson.dumps(events)})

    async def read_after(self, last: str, count: int) -> list[BufferedBatch]:
        """Up to ``count`` batches after entry ``last`` ('' for the first)."""
        start = f"({last}" if last else "-"
        entries = await self._redis.xrange(self._stream, min=start, count=count)
        return [
            BufferedBatch(entry_id, [tuple(e) for e in orjson.loads(fields["e"])])
            for entry_id, fields in entries
        ]

    async def trim(self, applied: str) -> None:
        """Forget the batches before ``applied`` (they are in Neo4j)."""
        await self._redis.xtrim(self._stream, minid=applied, approximate=False)

    async def backlog(self) -> int:
        return await self._redis.xlen(self._stream)


class SuggestionCache:
    def __init__(self, client: aioredis.Redis, settings: Settings) -> None:
        self._redis = client
        self._prefix = settings.redis_prefix
        self._ttl = settings.suggest_cache_seconds
        self._put = client.register_script(_PUT_IF_CURRENT)

    def _keys(self, user_id: str) -> list[str]:
        return [f"{self._prefix}sg:{{{user_id}}}", f"{self._prefix}sgv:{{{user_id}}}"]

    async def get(self, user_id: str) -> tuple[list[dict] | None, str]:
        """The cached suggestions (None if absent) and the user's generation."""
        body, generation = await self._redis.mget(self._keys(user_id))
        return (orjson.loads(body) if body else None), (generation or "0")

    async def put(self, user_id: str, generation: str, suggestions: list[dict]) -> None:
        """Cache, unless the user's generation moved since ``generation`` was read."""
        args = [generation, orjson.dumps(suggestions), self._ttl]
        await self._put(keys=self._keys(user_id), args=args)

    async def invalidate(self, *user_ids: str) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            for user_id in user_ids:
                cached, generation = self._keys(user_id)
                pipe.incr(generation)
                pipe.delete(cached)
            await pipe.execute()

    async def popular(self) -> list[str] | None:
        body = await self._redis.get(f"{self._prefix}popular")
        return orjson.loads(body) if body else None

    async def put_popular(self, user_ids: list[str], seconds: int) -> None:
        await self._redis.set(f"{self._prefix}popular", orjson.dumps(user_ids), ex=seconds)
