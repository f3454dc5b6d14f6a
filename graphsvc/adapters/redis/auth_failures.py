"""Failed authentications per client address, counted in Redis so every API process sees the
same count: ``<prefix>af:{<address>}:<window>``, one counter per fixed window aligned to the
clock, expiring with it (the hash tag is the address, so each counter is one key of one slot).
"""

from __future__ import annotations

import time

from graphsvc.adapters.redis.client import Client
from graphsvc.settings import AccessSettings, RedisSettings


class AuthFailures:
    def __init__(self, client: Client, redis: RedisSettings, access: AccessSettings) -> None:
        self._redis = client
        self._prefix = f"{redis.redis_prefix}af:"
        self._window = access.auth_failure_window_seconds

    def _key(self, address: str) -> tuple[str, float]:
        """The counter of the address's current window, and seconds until that window ends."""
        now = time.time()
        number = int(now // self._window)
        return f"{self._prefix}{{{address}}}:{number}", (number + 1) * self._window - now

    async def count(self, address: str) -> tuple[int, float]:
        """(failures of the address in this window, seconds until the window ends)."""
        key, left = self._key(address)
        return int(await self._redis.get(key) or 0), left

    async def add(self, address: str) -> None:
        key, left = self._key(address)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.incr(key)
            pipe.expire(key, max(1, int(left) + 1))
            await pipe.execute()
