"""The composition root (Cosmic Python's ``bootstrap``): what each process runs, put together
from the per-feature builders (``builders``), and opened over the two stores.

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
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from graphsvc.adapters.connections import Connections
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.builders.access import build_key_ring
from graphsvc.builders.background import Background, build_background
from graphsvc.builders.core import Core, build_core
from graphsvc.builders.graph_reads import GraphReads, build_graph_reads
from graphsvc.builders.maintenance import build_maintenance
from graphsvc.builders.moderation import build_moderation
from graphsvc.builders.operations import (
    Operated,
    Operations,
    build_consistency,
    build_timeline_check,
)
from graphsvc.builders.serving import Serving, build_serving_parts
from graphsvc.builders.suggestions import build_suggesting
from graphsvc.builders.timelines import build_timeline_jobs, build_timelines
from graphsvc.builders.whole import Services
from graphsvc.concurrency.jobs import Recorded
from graphsvc.services.consistency import Consistency
from graphsvc.settings import Settings
from graphsvc.workers.moderation_jobs import ModerationJobs

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


Built = TypeVar("Built", Serving, "Working", Operations, Services)


@dataclass(frozen=True, slots=True)
class Working:
    """The worker process: the background work, over the core it repairs and records in."""

    core: Core
    background: Background
    consistency: Consistency


def build_serving(settings: Settings, connections: Connections) -> Serving:
    core = build_core(settings, connections, serve=True)
    access = build_key_ring(core)
    moderation = build_moderation(core, Recorded(ModerationJobs.name), access)
    timelines = build_timelines(core, build_timeline_jobs(core))
    return build_serving_parts(
        core, access, moderation, timelines, build_suggesting(core), build_graph_reads(core)
    )


def build_working(settings: Settings, connections: Connections) -> Working:
    core = build_core(settings, connections, jobs=True)
    suggesting = build_suggesting(core)
    background = build_background(
        core, build_timeline_jobs(core), build_key_ring(core), suggesting.suggestions
    )
    return Working(core, background, build_consistency(core))


def build_operations(settings: Settings, connections: Connections) -> Operations:
    """An operations command's: long jobs, so NEO4J_JOB_TIMEOUT_SECONDS for every statement."""
    return Operations(build_core(settings, connections, jobs=True))


def build(
    settings: Settings,
    connections: Connections,
    *,
    split_page: bool | None = None,
    jobs: bool = False,
) -> Services:
    """``jobs``: a process of long jobs, whose Neo4j statements have
    NEO4J_JOB_TIMEOUT_SECONDS each."""
    core = build_core(settings, connections, jobs=jobs, split_page=split_page)
    access = build_key_ring(core)
    suggesting = build_suggesting(core)
    timeline_jobs = build_timeline_jobs(core)
    background = build_background(core, timeline_jobs, access, suggesting.suggestions)
    moderation = build_moderation(core, background.moderation_jobs, access)
    timelines = build_timelines(core, timeline_jobs)
    graph: GraphReads = build_graph_reads(core)
    parts = build_serving_parts(core, access, moderation, timelines, suggesting, graph)
    return Services(
        **parts.fields(),
        background=background,
        maintenance=build_maintenance(core),
        consistency=build_consistency(core),
        timeline_check=build_timeline_check(core, timelines),
    )


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
        await serving.core.neo4j.edges.prepare()
        await serving.suggestions.candidates.prepare()
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


async def _prepare_consumers(core: Core) -> None:
    """Every process makes the event consumers' groups, each at the stream's end, so that
    what the API writes before a worker's first start waits for it."""
    settings = core.settings
    groups = (
        settings.timelines.timeline_consumer_group,
        settings.cold_start.cold_start_charts_consumer_group,
    )
    try:
        for group in groups:
            await core.redis.stream.ensure_group(group)
    except REDIS_DOWN as exc:  # the consumers create their groups once Redis answers
        log.warning("event consumer groups not ready (%s)", exc)
