"""The composition root (Cosmic Python's ``bootstrap``): what each process runs
(``builders/bundles.py``, made from the per-feature builders), opened over the two stores.

- The API (``open_serving``) builds what its routes call. It records background work for the
  workers and builds none of their loops, nor the job kinds it only records.
- The worker (``open_working``) builds the background work and what runs beside it.
- An operations command (``open_operations``) builds the core, the operators' door to the
  stores and the mirror's check, the rest on first use; it runs the jobs it starts itself,
  at most WORKER_JOBS at once.
- Scripts, tests, notebooks and the evaluations (``open_services``) build both over one core.

The ``build_*`` functions do no I/O, so tests can build parts with other settings over
connections they share; the ``open_*`` ones open the connections and apply the schema.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TypeVar

from graphsvc.adapters.connections import Connections
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.builders.bundles import (
    Operated,
    Operations,
    Services,
    Serving,
    Working,
    build,
    build_operations,
    build_serving,
    build_working,
)
from graphsvc.builders.core import Core
from graphsvc.settings import Settings

__all__ = [
    "Connections",
    "Operated",
    "Operations",
    "Services",
    "Serving",
    "Working",
    "build",
    "build_serving",
]

log = logging.getLogger(__name__)


Built = TypeVar("Built", Serving, Working, Operations, Services)


@asynccontextmanager
async def _opened(settings: Settings, make: Callable[[Connections], Built]) -> AsyncIterator[Built]:
    """Connections open, the parts built over them, the schema in, the consumers' groups
    made."""
    async with Connections.open(settings.neo4j, settings.redis) as connections:
        built = make(connections)
        await built.core.neo4j.store.apply_schema()
        await _prepare_consumers(built.core)
        yield built


@asynccontextmanager
async def open_serving(settings: Settings) -> AsyncIterator[Serving]:
    """The API's parts, ready: the write statements and the candidate reads planned before
    the first request (a Neo4j that has just started is slow to plan them, the first writes
    would hold their users' locks meanwhile, and the first suggestions could outlast their
    timeout); on exit, the event streams closed."""
    async with _opened(settings, partial(build_serving, settings)) as serving:
        started = time.monotonic()
        await serving.prepare()
        log.info("statements planned in %.2f s", time.monotonic() - started)
        try:
            yield serving
        finally:
            await serving.close()


@asynccontextmanager
async def open_working(settings: Settings) -> AsyncIterator[Working]:
    """The worker's parts, ready; on exit, its jobs stopped (their records let another worker
    resume them)."""
    async with _opened(settings, partial(build_working, settings)) as working:
        try:
            yield working
        finally:
            await working.core.jobs.close()


@asynccontextmanager
async def open_operations(settings: Settings) -> AsyncIterator[Operations]:
    """An operations command's parts, ready; on exit, the jobs it left running stopped
    (their records let a worker resume them)."""
    async with _opened(settings, partial(build_operations, settings)) as operations:
        try:
            yield operations
        finally:
            await operations.core.jobs.close()


@asynccontextmanager
async def open_services(
    settings: Settings, *, finish: bool = False, jobs: bool = False
) -> AsyncIterator[Services]:
    """Both processes' parts, ready, for scripts, notebooks and the evaluations. On exit,
    running jobs are waited for when ``finish`` is set, else stopped. ``jobs``: a process of
    long jobs (NEO4J_JOB_TIMEOUT_SECONDS for every statement)."""
    async with _opened(settings, partial(build, settings, jobs=jobs)) as services:
        try:
            yield services
            if finish:
                await services.core.jobs.drain()
        finally:
            await services.close()


def event_consumer_groups(settings: Settings) -> tuple[str, ...]:
    """The consumer groups of the event stream, each read by the workers."""
    return (
        settings.timelines.timeline_consumer_group,
        settings.lists.list_consumer_group,
        settings.cold_start.cold_start_charts_consumer_group,
    )


async def _prepare_consumers(core: Core) -> None:
    """Every process makes the event consumers' groups, each at the stream's end, so that
    what the API writes before a worker's first start waits for it."""
    try:
        for group in event_consumer_groups(core.settings):
            await core.redis.stream.ensure_group(group)
    except REDIS_DOWN as exc:  # the consumers create their groups once Redis answers
        log.warning("event consumer groups not ready (%s)", exc)
