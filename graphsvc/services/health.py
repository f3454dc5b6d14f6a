"""Whether the two stores answer, and the states ``/metrics`` reports. Neo4j is required
(nothing can be written without it); Redis is not (reads are then served from Neo4j)."""

from __future__ import annotations

import logging

from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.neo4j.store import STORE_DOWN, Neo4jStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.services.fallback import Breaker
from graphsvc.services.jobs import Jobs
from graphsvc.services.telemetry import BREAKER_OPEN, JOBS_RUNNING, OUTBOX_BACKLOG

log = logging.getLogger(__name__)


class Health:
    def __init__(self, store: Neo4jStore, mirror: Mirror) -> None:
        self._store = store
        self._mirror = mirror

    async def check(self) -> dict[str, str]:
        """``{"neo4j": "ok", "redis": "ok" | "unavailable"}``; raises when Neo4j is down."""
        await self._store.verify()
        try:
            await self._mirror.ping()
        except REDIS_DOWN:
            return {"neo4j": "ok", "redis": "unavailable"}
        return {"neo4j": "ok", "redis": "ok"}


class Gauges:
    def __init__(self, breaker: Breaker, jobs: Jobs, outbox: OutboxStore) -> None:
        self._breaker = breaker
        self._jobs = jobs
        self._outbox = outbox

    async def refresh(self) -> None:
        """Read the states; a Neo4j that does not answer leaves the backlog as it was."""
        BREAKER_OPEN.set(1 if self._breaker.open else 0)
        JOBS_RUNNING.set(self._jobs.running())
        try:
            OUTBOX_BACKLOG.set(await self._outbox.backlog())
        except STORE_DOWN as exc:
            log.warning("outbox backlog not read: %s", exc)
