"""Graph loads, and the background work that waits for them to end.

A load (`graphsvc load`, `graphsvc demo`: ``ops/data/loader.py``) writes the graph for minutes,
and Neo4j's offline importer (``ops/data/bulk_import.py``) restarts the server and builds every
index again. Work that reads the whole graph meanwhile (the ranker's training, the refresh of
the cold start's charts) would read half a graph, or fail: on a server that is restarting, on
a transaction that an index build made outdated. So a load holds a mark in Redis while it
runs (``loading``; a mark of ``adapters/redis/leases.py``, which several loads may hold at
once), renewed every third of LOAD_MARK_SECONDS and let go at its end; a load that dies stops
renewing, and its hold runs out within LOAD_MARK_SECONDS. That work asks (``load_running``)
before it starts, and while a load runs it puts itself off (a log line) to its loop's next
round.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.leases import Leases
from graphsvc.concurrency.loops import stop_if_asked, stopped

log = logging.getLogger(__name__)

LOAD_MARK = "graph-load"
LOAD_MARK_SECONDS = 60.0  # renewed every third of it while the load runs


async def load_running(leases: Leases) -> bool:
    """Whether a load is writing the graph now."""
    return await leases.held(LOAD_MARK)


@asynccontextmanager
async def loading(leases: Leases) -> AsyncIterator[None]:
    """Hold the mark while the block loads the graph."""
    holder = uuid.uuid4().hex
    await leases.hold(LOAD_MARK, holder, LOAD_MARK_SECONDS)
    renewing = asyncio.get_running_loop().create_task(_renew(leases, holder))
    try:
        yield
    finally:
        await stopped([renewing])
        with suppress(*REDIS_DOWN):  # else it runs out by itself
            await leases.let_go(LOAD_MARK, holder)


async def _renew(leases: Leases, holder: str) -> None:
    while True:
        await asyncio.sleep(LOAD_MARK_SECONDS / 3)
        try:
            await leases.hold(LOAD_MARK, holder, LOAD_MARK_SECONDS)
        except REDIS_DOWN as exc:
            log.warning("cannot renew the graph load's mark: %s", exc)
        stop_if_asked()  # a cancel a Redis call turned into its own error still stops it
