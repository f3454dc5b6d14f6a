"""The suggestion cache: each user's computed suggestions, for SUGGEST_CACHE_SECONDS.

An entry is ``{"version": v, "items": [...]}``: the list and the version of the ranker that
computed it, so an answer served from the cache names the version that ranked it. An entry
without a version (a bare list) is read as a miss, computed again and replaced.

A write that changes a user's suggestions bumps the user's generation (``<prefix>sgv:{u}``,
the slot of the user's mirror keys) and drops the entry; a computation that started before the
bump cannot store its (stale) answer after it: the put is a script that compares generations.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from graphsvc.adapters.redis.client import Client, Command, queued
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

    async def get(self, user_id: str) -> tuple[tuple[int, list[dict]] | None, str]:
        """The cached suggestions with the version of the ranker that computed them (None if
        absent, or stored without a version), and the user's generation."""
        body, generation = await self._redis.mget(self._keys(user_id))
        entry = orjson.loads(body) if body else None
        if not isinstance(entry, dict):
            return None, (generation or "0")
        return (int(entry["version"]), entry["items"]), (generation or "0")

    async def put(
        self, user_id: str, generation: str, version: int, suggestions: list[dict]
    ) -> None:
        """Cache, unless the user's generation moved since ``generation`` was read."""
        entry = orjson.dumps({"version": version, "items": suggestions})
        await self._put(keys=self._keys(user_id), args=[generation, entry, self._ttl])

    def invalidations(self, user_ids: Sequence[str]) -> list[Command]:
        """The invalidation of these users' entries, for the caller to send."""
        commands: list[Command] = []
        for user_id in user_ids:
            cached, generation = self._keys(user_id)
            commands += [("INCR", generation), ("DEL", cached)]
        return commands

    async def invalidate(self, *user_ids: str) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            queued(self.invalidations(user_ids))(pipe)
            await pipe.execute()
