"""The suggestion cache: each user's computed suggestions, for SUGGEST_CACHE_SECONDS.

A write that changes a user's suggestions bumps the user's generation (``<prefix>sgv:{u}``,
the slot of the user's mirror keys) and drops the entry; a computation that started before the
bump cannot store its (stale) answer after it: the put is a script that compares generations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from graphsvc.adapters.redis.client import Client
from graphsvc.settings import RedisSettings, SuggestionSettings

_PUT_IF_CURRENT = """
local current = redis.call('GET', KEYS[2]) or '0'
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
"""


class SuggestionCache:
    def __init__(
        self, client: Client, redis: RedisSettings, suggestions: SuggestionSettings
    ) -> None:
        self._redis = client
        self._prefix = redis.redis_prefix
        self._ttl = suggestions.suggest_cache_seconds
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

    def invalidate_on(self, pipe: Any, user_ids: Sequence[str]) -> None:
        """Queue the invalidation of these users' entries on a pipeline the caller runs."""
        for user_id in user_ids:
            cached, generation = self._keys(user_id)
            pipe.incr(generation)
            pipe.delete(cached)

    async def invalidate(self, *user_ids: str) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            self.invalidate_on(pipe, user_ids)
            await pipe.execute()
