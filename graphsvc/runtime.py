"""Opening and closing the two backing stores as one unit (API, CLI, tests, notebooks)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from graphsvc.degraded import MIRROR_DOWN
from graphsvc.graph import GraphStore, open_driver
from graphsvc.mirror import Mirror
from graphsvc.redisconn import open_redis
from graphsvc.relay import run_relay
from graphsvc.service import GraphService
from graphsvc.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Backends:
    graph: GraphStore
    mirror: Mirror

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings) -> AsyncIterator[Backends]:
        driver = open_driver(settings)
        client = open_redis(settings)
        try:
            await driver.verify_connectivity()
            try:
                await client.ping()
            except MIRROR_DOWN as exc:  # served from Neo4j until it answers
                log.warning("redis does not answer at start-up (%s)", exc)
            yield cls(GraphStore(driver, settings.neo4j_database), Mirror(client, settings))
        finally:
            await client.aclose()
            await driver.close()


@asynccontextmanager
async def open_service(
    settings: Settings, *, resume: bool = False, finish: bool = False
) -> AsyncIterator[GraphService]:
    """A ready service (schema applied) for the API, scripts, notebooks and the CLI.

    ``resume`` (serving processes) restarts fan-outs and erasures a stopped process left
    unfinished and runs the interaction flusher and the outbox relay; on exit,
    running jobs are waited for when ``finish`` is set (the CLI), else stopped (they resume
    at the next start).
    """
    async with Backends.open(settings) as backends:
        await backends.graph.apply_schema()
        service = GraphService(backends.graph, backends.mirror, settings)
        loops: list[asyncio.Task[None]] = []
        try:
            if resume:
                await service.resume_pending()
                loop = asyncio.get_running_loop()
                loops.append(loop.create_task(service.pymk.run_flusher()))
                loops.append(loop.create_task(run_relay(service)))
            yield service
            if finish:
                await service.background.drain()
        finally:
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await service.feed.close()
            await service.background.close()
