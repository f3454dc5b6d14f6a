"""Whether the two stores answer, and the states ``/metrics`` reports. Neo4j is required
(nothing can be written without it); Redis is not (reads are then served from Neo4j). The
suggestion ranker's staleness is told beside them, never a reason to be unready: a stale
model still serves.

After Neo4j was lost (stopped, restarted, out of reach), the process is ready again once its
database runs a statement and the write statements and candidate reads are planned again
(``WarmUp``): the probe starts that planning, and answers 503 ``store_warming`` until it is
done."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.neo4j.store import STORE_DOWN, Neo4jStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.ranker.registry import stale_text
from graphsvc.services.ranker import RankerSource
from graphsvc.services.telemetry import OUTBOX_BACKLOG

log = logging.getLogger(__name__)
PING_SECONDS = 0.5
# How long a probe waits for the statements planned again after Neo4j was lost (the
# planning goes on after it answered 503).
WARM_UP_WAIT_SECONDS = 0.5


class Health:
    def __init__(
        self,
        store: Neo4jStore,
        mirror: Mirror,
        ranker: RankerSource,
        plans: Sequence[WarmUp],
    ) -> None:
        self._store = store
        self._mirror = mirror
        self._ranker = ranker
        self._plans = plans

    async def check(self) -> dict[str, str]:
        """``{"neo4j": "ok", "redis": "ok" | "unavailable"}``; raises when Neo4j is down, or
        is back and its statements are being planned again (``StoreWarming``)."""
        await self._store.verify()
        for plans in self._plans:
            await plans.ready(WARM_UP_WAIT_SECONDS)
        try:
            # bounded: a hung Redis must not outlast a probe's timeout (1 s by default)
            await asyncio.wait_for(self._mirror.ping(), PING_SECONDS)
        except (*REDIS_DOWN, TimeoutError):
            return {"neo4j": "ok", "redis": "unavailable"}
        return {"neo4j": "ok", "redis": "ok"}

    async def ready(self) -> dict[str, str]:
        """``check``'s answer and ``"ranker"``: "ok" or why the served ranker is stale (read at
        most every RANKER_REFRESH_SECONDS)."""
        stores = await self.check()
        found = await self._ranker.staleness()
        if found is None:
            return {**stores, "ranker": "unknown: the model registry could not be read"}
        return {**stores, "ranker": stale_text(found)}


class Gauges:
    def __init__(self, outbox: OutboxStore, ranker: RankerSource) -> None:
        self._outbox = outbox
        self._ranker = ranker

    async def refresh(self) -> None:
        """Read the states (the breaker and running jobs keep their gauges as they change,
        so every worker's are current; the ranker's staleness is read again only when
        RANKER_REFRESH_SECONDS passed); a Neo4j that does not answer leaves them as
        they were."""
        try:
            OUTBOX_BACKLOG.set(await self._outbox.backlog())
        except STORE_DOWN as exc:
            log.warning("outbox backlog not read: %s", exc)
        await self._ranker.staleness()
