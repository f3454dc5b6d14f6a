"""Request budgets in Redis: the ``limits`` library's fixed windows (aligned to the clock, one
counter per key, budget and window, expiring with the window), on the same Redis or Redis
Cluster as the mirror, under the same prefix. On a single Redis the window is spent on the
multiplexed connections of the hot reads (``multiplexed.py``) by the library's own script, on its
own keys; on a cluster, through the library's storage."""

from __future__ import annotations

import asyncio
import time

from limits import RateLimitItem, parse
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.errors import StorageError
from redis.exceptions import RedisError

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.multiplexed import Lua, Multiplexed
from graphsvc.adapters.redis.scripts import script_source
from graphsvc.settings import AccessSettings, RedisSettings

# Redis cannot be reached (the connection is lost, refused or times out): the caller fails open.
RATE_STORE_UNREACHABLE = (*REDIS_DOWN, OSError, asyncio.TimeoutError)
# Redis answers but refuses (out of memory, read-only replica, a script error...): the caller
# meters in its own process instead. Test RATE_STORE_UNREACHABLE first: it is a subset.
RATE_STORE_REFUSED = (StorageError, RedisError)


class RateLimitStore:
    def __init__(
        self, redis: RedisSettings, access: AccessSettings, multiplexed: Multiplexed | None = None
    ) -> None:
        """``multiplexed``: the connections to spend the windows on; None: the library's own
        storage (a cluster), which is then the only one built."""
        self._prefix = f"{redis.redis_prefix}rl"
        self._multiplexed = multiplexed
        self._spend = Lua(script_source("budget_spend"))
        self._storage = _storage(redis, self._prefix) if multiplexed is None else None
        self._items: dict[bool, RateLimitItem] = {
            False: parse(access.rate_limit_reads),
            True: parse(access.rate_limit_writes),
        }

    def budget(self, *, write: bool) -> tuple[int, int]:
        """(requests allowed, the window in seconds) of the reads' or the writes' budget."""
        item = self._items[write]
        return item.amount, item.get_expiry()

    async def hit(self, key_id: str, *, write: bool, cost: int = 1) -> tuple[int, int, float]:
        """Spend ``cost`` requests: (requests in this window so far, the window's limit,
        seconds until it resets). Windows are aligned to the clock (the window's number is
        part of the key), so the reset is known without asking Redis: one round trip a
        request."""
        item = self._items[write]
        window = item.get_expiry()
        now = time.time()
        number = int(now // window)
        name = item.key_for(key_id, "w" if write else "r", str(number))
        if self._storage is not None:
            count = await self._storage.incr(name, window, amount=cost)
        else:  # the storage's key: its prefix, a colon, the name
            assert self._multiplexed is not None
            key = f"{self._prefix}:{name}"
            count = await self._multiplexed.script(self._spend, [key], [window, cost])
        return int(count), item.amount, (number + 1) * window - now


def _storage(redis: RedisSettings, prefix: str) -> RedisStorage:
    """The ``limits`` library's storage on the settings' Redis or Redis Cluster."""
    scheme, sep, rest = redis.redis_url.partition("://")
    options = {
        "socket_connect_timeout": redis.redis_connect_timeout,
        "socket_timeout": min(redis.redis_socket_timeout, 1.0),
    }
    if redis.redis_cluster:
        host = rest.split("/", 1)[0]
        return RedisClusterStorage(
            f"async+{scheme}+cluster://{host}",
            implementation="redispy",
            key_prefix=prefix,
            **options,
        )
    return RedisStorage(
        f"async+{scheme}{sep}{rest}", implementation="redispy", key_prefix=prefix, **options
    )
