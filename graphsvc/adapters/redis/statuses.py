"""The mirror of user statuses: ``<prefix>x:{status}``, the set of every inactive (suspended or
spam) user that list reads leave out, and ``<prefix>xv:{status}``, each user's status version.

Both share the ``{status}`` hash tag (one cluster slot). The member ``""`` marks the set as
built: a missing marker (new or flushed Redis) means the set must be rebuilt from Neo4j
before a list can be filtered by it. A status write carries its version (the user's clock
tick), so a late write cannot undo a newer one; repairs may force Neo4j's word.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.settings import RedisSettings


class StatusesMissing(Exception):
    """The set of inactive users is not in Redis (new, flushed): build it, then ask again."""


class StatusSet:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self.inactive_key = f"{settings.redis_prefix}x:{{status}}"
        self._versions = f"{settings.redis_prefix}xv:{{status}}"
        self._status = register(client, "status")

    async def set_status(self, user_id: str, inactive: bool, version: int) -> None:
        """Mirror a committed status change (the newest version wins)."""
        keys = [self.inactive_key, self._versions]
        await self._status(keys=keys, args=[user_id, int(inactive), version])

    async def force_status(self, user_id: str, inactive: bool, version: int) -> None:
        """Set a user's mirrored status from Neo4j whatever version the mirror holds (repairs)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._versions, user_id, version)
            if inactive:
                pipe.sadd(self.inactive_key, user_id)
            else:
                pipe.srem(self.inactive_key, user_id)
            await pipe.execute()

    async def load(self, inactive: Sequence[tuple[str, int]]) -> None:
        """Build the inactive set from Neo4j's inactive users (and their status versions)."""
        keys = [self.inactive_key, self._versions]
        await run_many(self._redis, self._status, [(keys, [uid, 1, v]) for uid, v in inactive])

    async def mark_built(self) -> None:
        await self._redis.sadd(self.inactive_key, "")

    async def inactive_among(self, user_ids: Sequence[str]) -> set[str] | None:
        """Which of these users are inactive; None when the set is not built (lost or new)."""
        flags = await self._redis.smismember(self.inactive_key, [*user_ids, ""])
        if not flags[-1]:
            return None
        return {uid for uid, flag in zip(user_ids, flags, strict=False) if flag}
