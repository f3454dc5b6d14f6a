"""Request budgets in Redis through the ``limits`` library (fixed windows, one counter per
key and budget), on the same Redis or Redis Cluster as the mirror, under the same prefix."""

from __future__ import annotations

import asyncio
import time

from limits import RateLimitItem, parse
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.errors import StorageError
from redis.exceptions import RedisError

from graphsvc.settings import Settings

# Raised when the budgets cannot be read: the caller fails open.
RATE_STORE_DOWN = (StorageError, RedisError, OSError, asyncio.TimeoutError)


class RateLimitStore:
    def __init__(self, settings: Settings) -> None:
        url = settings.redis_url
        scheme, sep, rest = url.partition("://")
        options = {
            "socket_connect_timeout": settings.redis_connect_timeout,
            "socket_timeout": min(settings.redis_socket_timeout, 1.0),
        }
        prefix = f"{settings.redis_prefix}rl"
        if settings.redis_cluster:
            host = rest.split("/", 1)[0]
            self._storage: RedisStorage = RedisClusterStorage(
                f"async+{scheme}+cluster://{host}", implementation="redispy",
                key_prefix=prefix, **options,
            )  # fmt: skip
        else:
            self._storage = RedisStorage(
                f"async+{scheme}{sep}{rest}", implementation="redispy", key_prefix=prefix,
                **options,
            )  # fmt: skip
        self._items: dict[bool, RateLimitItem] = {
            False: parse(settings.rate_limit_reads),
            True: parse(settings.rate_limit_writes),
        }

    async def hit(self, key_id: str, *, write: bool) -> tuple[int, int, float]:
        """Spend one: (requests in this window so far, the window's limit, seconds until it
        resets)."""
        item = self._items[write]
        name = item.key_for(key_id, "w" if write else "r")
        count, expires_at = await asyncio.gather(
            self._storage.incr(name, item.get_expiry()), self._storage.get_expiry(name)
        )
        window = float(item.get_expiry())
        # read beside the incr: a new window may have no TTL yet (the whole window is left);
        # TTL is in whole seconds, so an ending window reads 0 or less (a second is left)
        reset = expires_at - time.time()
        if reset <= 0 or reset > window:
            reset = window if count <= 1 else 1.0
        return int(count), item.amount, reset
