"""Per-key request budgets, kept in Redis so every API process spends from the same one.

Two budgets per key, reads (GET) and writes (everything else), each a fixed window of
RATE_LIMIT_READS / RATE_LIMIT_WRITES, aligned to the clock.

A request spends its route's cost, in requests: one for what the mirror answers (a page, the
counts) and for a write, more for what makes the graph work (a common list, suggestions...).
Each route declares its cost with its scope (``api/http/access.py``: ``guarded(..., cost=...)``),
so the budget bounds the work a key can ask of Neo4j, not only its number of requests.

When Redis fails, what happens depends on how it fails:

- **Unreachable** (the connection is lost, refused or times out): the request goes through
  unmetered (fail open) and ``graphsvc_rate_limit_fail_open_total`` says so, and Redis is not
  tried again for REDIS_RETRY_SECONDS. An unreachable Redis is an outage of its own (reads are
  served from Neo4j meanwhile), and a limiter that is down must not take the service down with
  it.
- **Refusing** (it answers with an error: out of memory, a read-only replica, a script or
  cluster error): the request is metered by this process alone, with the same budgets
  (``graphsvc_rate_limit_local_total`` counts it), for REDIS_RETRY_SECONDS before Redis is asked
  again. A Redis that refuses writes is what a flood of writes can bring about, so it must not
  switch the budgets off: each process then enforces the whole budget by itself (a key gets at
  most the budget times the API processes), and refuses past it with the usual 429.

The per-user follow limits (FOLLOWS_PER_DAY) are separate and unchanged.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass

from graphsvc.adapters.redis.rate_limits import (
    RATE_STORE_REFUSED,
    RATE_STORE_UNREACHABLE,
    RateLimitStore,
)
from graphsvc.domain.errors import GraphError
from graphsvc.services import telemetry
from graphsvc.settings import AccessSettings, RedisSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Budget:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: float

    def headers(self) -> list[tuple[str, str]]:
        reset = str(max(0, math.ceil(self.reset_seconds)))
        return [
            ("RateLimit-Limit", str(self.limit)),
            ("RateLimit-Remaining", str(self.remaining)),
            ("RateLimit-Reset", reset),
        ]


class RateLimited(GraphError):
    status = 429
    code = "rate_limited"

    def __init__(self, budget: Budget) -> None:
        reset = str(max(1, math.ceil(budget.reset_seconds)))
        super().__init__(
            f"this key's budget of {budget.limit} requests is spent; retry in {reset} s",
            {"Retry-After": reset, **dict(budget.headers())},
        )


LOCAL_KEYS = 10_000  # keys metered in-process at most (the least recently used go first)


class LocalBudgets:
    """The budgets of one process, for while Redis refuses: fixed windows aligned to the
    clock, as in Redis, counted in memory. Only authenticated keys are metered, and at most
    LOCAL_KEYS of them are kept."""

    def __init__(self, store: RateLimitStore) -> None:
        self._budgets = {write: store.budget(write=write) for write in (False, True)}
        self._counts: OrderedDict[tuple[str, bool], tuple[int, int]] = OrderedDict()

    def hit(self, key_id: str, *, write: bool, cost: int = 1) -> tuple[int, int, float]:
        """Spend ``cost``, as ``RateLimitStore.hit`` does: (count, limit, seconds to the
        reset)."""
        limit, window = self._budgets[write]
        now = time.time()
        number = int(now // window)
        slot = (key_id, write)
        seen, count = self._counts.pop(slot, (number, 0))
        count = count + cost if seen == number else cost
        self._counts[slot] = (number, count)
        while len(self._counts) > LOCAL_KEYS:
            self._counts.popitem(last=False)
        return count, limit, (number + 1) * window - now


class RateLimits:
    def __init__(
        self, store: RateLimitStore, settings: AccessSettings, redis: RedisSettings
    ) -> None:
        self._store = store
        self._local = LocalBudgets(store)
        self._enabled = settings.rate_limits_enabled
        self._retry = redis.redis_retry_seconds
        # After a failure, Redis is not tried again for a while: until then requests go
        # through unmetered (it was unreachable) or are metered here (it refused).
        self._skip_until = 0.0
        self._metered_here = False

    async def spend(self, key_id: str, *, write: bool, cost: int = 1) -> Budget | None:
        """Spend ``cost`` requests of the key's budget (refused when that overdraws it); None
        when not limited (disabled, or Redis unreachable). After a failure Redis is not tried
        again for REDIS_RETRY_SECONDS, so an outage costs one failed attempt per interval, not
        one per request."""
        if not self._enabled:
            return None
        if time.monotonic() < self._skip_until:
            return self._fallback(key_id, write=write, cost=cost)
        try:
            count, limit, reset = await self._store.hit(key_id, write=write, cost=cost)
        except RATE_STORE_UNREACHABLE as exc:
            self._skip(metered_here=False)
            log.warning("rate limits unreachable, not enforced for %.1f s (%s)", self._retry, exc)
            return self._fallback(key_id, write=write, cost=cost)
        except RATE_STORE_REFUSED as exc:
            self._skip(metered_here=True)
            log.warning(
                "redis refused the rate limits (%s); metered in this process for %.1f s",
                exc,
                self._retry,
            )
            return self._fallback(key_id, write=write, cost=cost)
        return _counted(count, limit, reset)

    def _skip(self, *, metered_here: bool) -> None:
        self._skip_until = time.monotonic() + self._retry
        self._metered_here = metered_here

    def _fallback(self, key_id: str, *, write: bool, cost: int) -> Budget | None:
        if not self._metered_here:
            telemetry.RATE_LIMIT_FAIL_OPEN.inc()
            return None
        telemetry.RATE_LIMIT_LOCAL.inc()
        return _counted(*self._local.hit(key_id, write=write, cost=cost))


def _counted(count: int, limit: int, reset: float) -> Budget:
    budget = Budget(count <= limit, limit, max(0, limit - count), reset)
    if not budget.allowed:
        telemetry.RATE_LIMIT_REFUSALS.inc()
    return budget
