"""Per-key request budgets, kept in Redis so every API process spends from the same one.

Two budgets per key, reads (GET) and writes (everything else), each a fixed window of
RATE_LIMIT_READS / RATE_LIMIT_WRITES. When Redis cannot be reached the request goes through
(fail open) and ``graphsvc_rate_limit_fail_open_total`` says so: a limiter that is down must
not take the service down with it. The per-user follow limits (FOLLOWS_PER_DAY) are separate
and unchanged.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from graphsvc.adapters.redis.rate_limits import RATE_STORE_DOWN, RateLimitStore
from graphsvc.domain.errors import GraphError
from graphsvc.services import telemetry
from graphsvc.settings import Settings

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


class RateLimits:
    def __init__(self, store: RateLimitStore, settings: Settings) -> None:
        self._store = store
        self._enabled = settings.rate_limits_enabled
        self._retry = settings.redis_retry_seconds
        self._skip_until = 0.0  # after a failure, Redis is not tried again for a while

    async def spend(self, key_id: str, *, write: bool) -> Budget | None:
        """Spend one request of the key's budget; None when not limited (disabled, or Redis
        unreachable: then not tried again for REDIS_RETRY_SECONDS, so an outage costs one
        failed attempt per interval, not one per request)."""
        if not self._enabled:
            return None
        if time.monotonic() < self._skip_until:
            telemetry.RATE_LIMIT_FAIL_OPEN.inc()
            return None
        try:
            count, limit, reset = await self._store.hit(key_id, write=write)
        except RATE_STORE_DOWN as exc:
            telemetry.RATE_LIMIT_FAIL_OPEN.inc()
            self._skip_until = time.monotonic() + self._retry
            log.warning("rate limits unavailable, not enforced for %.1f s (%s)", self._retry, exc)
            return None
        budget = Budget(count <= limit, limit, max(0, limit - count), reset)
        if not budget.allowed:
            telemetry.RATE_LIMIT_REFUSALS.inc()
        return budget
