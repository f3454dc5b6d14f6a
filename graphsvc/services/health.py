"""Whether the two stores answer, and the states ``/metrics`` reports. Neo4j is required
(nothing can be written without it); Redis is not (reads are then served from Neo4j)."""

from __future__ import annotations

import asyncio
import logging

from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.neo4j.store import STORE_DOWN, Neo4jStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.services.telemetry import OUTBOX_BACKLOG

log = logging.getLogger(__name__)
PING_SECONDS = 0.5


class Health:
    def __init__(self, store: Neo4jStore, mirror: Mirror) -> None:
        self._store = store
        self._mirror = mirror

    async def check(self) -> dict[str, str]:
        """``{"neo4j": "ok", "redis": "ok" | "unavailable"}``; raises when Neo4j is down."""
        await self._store.verify()
        try:
            # bounded: a hung Redis must not outlast a probe's timeout (1 s by default)
            await asyncio.wait_for(self._mirror.ping(), PING_SECONDS)
        except (*REDIS_DOWN, TimeoutError):
            return {"neo4j": "ok", "redis": "unavailable"}
        return {"neo4j": "ok", "redis": "ok"}


class Gauges:
    def __init__(self, outbox: OutboxStore) -> None:
        self._outbox = outbox

    async def refresh(self) -> None:
        """Read the states (the breaker and running jobs keep their gauges as they change,
        so every worker's are current); a Neo4j that does not answer leaves the backlog as
        it was."""
        try:
            OUTBOX_BACKLOG.set(await self._outbox.backlog())
        except STORE_DOWN as exc:
            log.warning("outbox backlog not read: %s", exc)
