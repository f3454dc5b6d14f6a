"""Initial load of an empty local database at full speed.

Transactions cannot load edges as fast as an initial load needs on a small machine; Neo4j's
offline importer can (docs/performance.md, the load rows). When the target is the local
server this project runs and its database is empty, the loader stops Neo4j while it writes
the importer's CSV files and plans the mirror, imports, and restarts it while the Redis
mirror is installed straight from the same edges: in an empty database they are the whole
truth.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import csv as pacsv

from graphsvc.bootstrap import Operated
from graphsvc.ops.data.bulk_mirror import MirrorPlan, install_plan, plan_mirror
from graphsvc.ops.data.edge_files import Edges, LoadReport
from graphsvc.ops.servers.local_servers import LocalNeo4j

_PLAIN = pacsv.WriteOptions(quoting_style="none", batch_size=1 << 16)


def clocks(edges: Edges) -> np.ndarray:
    """Each user's clock: its newest follow time (0 for a user who follows no one), so live
    writes after the load are ordered after it."""
    clock = np.zeros(len(edges.ids), dtype=np.int64)
    if edges.count:
        first = np.flatnonzero(np.concatenate([[True], edges.src[1:] != edges.src[:-1]]))
        clock[edges.src[first]] = np.maximum.reduceat(edges.since, first)
    return clock


def write_import_files(edges: Edges, folder: Path) -> tuple[Path, Path]:
    """users.csv (an integer import id, the user id, the clock) and follows.csv (import ids:
    the importer maps integers much faster than strings, and never stores them; then the
    follow time and the ids of the edge's ends, which every edge carries for the list
    indexes)."""
    folder.mkdir(parents=True, exist_ok=True)
    nodes, relationships = folder / "users.csv", folder / "follows.csv"
    users = pa.table(
        {
            ":ID": pa.array(np.arange(len(edges.ids), dtype=np.int64)),
            "id": edges.ids,
            "clk:long": pa.array(clocks(edges)),
        }
    )
    pacsv.write_csv(users, nodes, _PLAIN)
    follows = pa.table(
        {
            ":START_ID": pa.array(edges.src),
            ":END_ID": pa.array(edges.dst),
            "since:long": pa.array(edges.since),
            "src": edges.ids.take(pa.array(edges.src)),
            "dst": edges.ids.take(pa.array(edges.dst)),
        }
    )
    pacsv.write_csv(follows, relationships, _PLAIN)
    return nodes, relationships


@dataclass(frozen=True, slots=True)
class _Prepared:
    """The importer's files and the mirror's plan, written while the server stopped."""

    nodes: Path
    relationships: Path
    plan: MirrorPlan
    at: int  # the mirror's snapshot time: once the server was down
    files_seconds: float
    down_seconds: float


async def _prepare(
    parts: Operated, edges: Edges, server: LocalNeo4j, say: Callable[[str], None]
) -> _Prepared:
    begun = time.perf_counter()
    # The server stops while the files are written and the mirror planned. The mirror's
    # snapshot time is taken once it is down, after the last write Neo4j could accept, so any
    # write stamped earlier (and erased by the import) is fenced out.
    # An empty database leaves only stale mirrors: most keys go meanwhile, and whatever a
    # write still brought in before the server was down goes once it is.
    stopping = asyncio.create_task(asyncio.to_thread(server.down, say))
    clearing = asyncio.create_task(parts.maintenance.clear_mirror())
    nodes, relationships = await asyncio.to_thread(
        write_import_files, edges, server.home / "import"
    )
    plan = await asyncio.to_thread(plan_mirror, edges, parts.settings.mirror.hot_list_cap)
    written = time.perf_counter()
    await stopping
    stopped = time.perf_counter()
    at = int(time.time() * 1_000_000)  # the local server and this process share the clock
    removed = await clearing + await parts.maintenance.clear_mirror()
    if removed:
        say(f"mirror: removed {removed:,} stale keys")
    return _Prepared(nodes, relationships, plan, at, written - begun, stopped - begun)


async def _import_and_mirror(
    parts: Operated,
    server: LocalNeo4j,
    prepared: _Prepared,
    *,
    progress: bool,
    say: Callable[[str], None],
) -> dict[str, float]:
    """Import, restart and build the schema, installing the mirror meanwhile; how long each
    took."""
    took: dict[str, float] = {}

    async def timed(name: str, work: Awaitable[None]) -> None:
        begun = time.perf_counter()
        await work
        took[name] = time.perf_counter() - begun

    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    async def mirror() -> None:
        # The importer's own start-up and first stages would share the two cores with the
        # mirror's Python and Redis: the mirror waits for the import and runs while the
        # server starts (its restart, schema and indexes leave a core free).
        await done.wait()
        await timed("mirror", install_plan(parts, prepared.plan, prepared.at, progress=progress))

    async def neo4j() -> None:
        await timed(
            "import",
            asyncio.to_thread(
                server.import_csv,
                prepared.nodes,
                prepared.relationships,
                say,
                lambda: loop.call_soon_threadsafe(done.set),
            ),
        )
        await timed("schema", parts.maintenance.apply_schema())
        await timed("indexes", parts.maintenance.await_indexes())

    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(neo4j())
            group.create_task(mirror())
    except BaseExceptionGroup as failed:
        # Never leave a mirror of edges that Neo4j does not have.
        await parts.maintenance.clear_mirror()
        raise failed.exceptions[0] from None
    return took


async def import_edges(
    parts: Operated,
    edges: Edges,
    server: LocalNeo4j,
    *,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> LoadReport:
    started = time.perf_counter()
    prepared = await _prepare(parts, edges, server, say)
    took = await _import_and_mirror(parts, server, prepared, progress=progress, say=say)
    prepared.nodes.unlink()
    prepared.relationships.unlink()
    say(
        f"load: files and mirror plan {prepared.files_seconds:.1f}s (the server stopping "
        f"meanwhile, down after {prepared.down_seconds:.1f}s); import and restart "
        f"{took['import']:.1f}s, then schema {took['schema']:.1f}s, indexes "
        f"{took['indexes']:.1f}s; mirror {took['mirror']:.1f}s from the end of the import"
    )
    return LoadReport(len(edges.ids), edges.count, edges.count, time.perf_counter() - started)
