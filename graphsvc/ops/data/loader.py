"""Loading follow graphs: the fastest safe way in, and rebuilding the mirror of what was loaded.

Into an empty local database, large files go through Neo4j's offline importer
(``bulk_import``); everything else goes in batched transactions that lock followers as live
writes do, after which the users touched are dropped from the mirror under a floor, and those
that were mirrored are rebuilt from Neo4j (``settle_mirror``). Either way the load holds the
graph loads' mark while it runs, so the workers' whole-graph work waits for its end
(``workers/graph_loads.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
from tqdm import tqdm

from graphsvc.bootstrap import Operated
from graphsvc.domain.model import Side
from graphsvc.ops.data.bulk_import import import_edges
from graphsvc.ops.data.edge_files import Edges, LoadReport, batches
from graphsvc.ops.servers.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, get_local_server_settings
from graphsvc.workers.graph_loads import loading

IMPORT_MIN_EDGES = 200_000  # below this, restarting Neo4j costs more than transactions
EDGES_PER_TRANSACTION = 20_000
# One at a time: batches of disjoint followers still deadlock (a follower of one batch is
# followed in another, and creating a relationship locks a sparse node), and Neo4j's retries
# then cost more than the overlap gains on two cores.
CONCURRENT_TRANSACTIONS = 1
MIRROR_BATCHES_AT_ONCE = 2  # Neo4j reads one batch while Redis installs the one before
DROP_BATCH_USERS = 10_000


async def load(
    parts: Operated,
    edges: Edges,
    *,
    local: LocalServerSettings | None = None,
    progress: bool = True,
    online: bool = False,
    say: Callable[[str], None] = print,
) -> LoadReport:
    """Load edges the fastest safe way: the offline importer into an empty local database
    (for large loads, where it pays for a server restart), otherwise transactions, under
    the graph loads' mark. ``online`` forces transactions; ``local`` names the local
    servers (default: from the environment)."""
    server = LocalNeo4j(parts.settings, local or get_local_server_settings())
    large = edges.count >= IMPORT_MIN_EDGES
    empty = large and not online and server.managed()
    async with loading(parts.maintenance.leases):
        if empty and await parts.maintenance.user_count() == 0:
            say("neo4j: the database is empty: bulk import (the server restarts)")
            return await import_edges(parts, edges, server, progress=progress, say=say)
        return await load_edges(parts, edges, progress=progress)


def follower_groups(edges: Edges, size: int) -> Iterator[list[dict[str, Any]]]:
    """Transactions of about ``size`` edges, each a list of per-follower groups (a follower's
    edges are never split), with the clock target of ``bulk/load_follows``."""
    if not edges.count:
        return
    names = edges.ids.to_numpy(zero_copy_only=False).astype(object)
    src = edges.src
    starts = np.flatnonzero(np.concatenate([[True], src[1:] != src[:-1]]))
    sizes = np.diff(np.append(starts, len(src)))
    position = np.arange(len(src)) - np.repeat(starts, sizes)  # 0-based within the group
    target = np.maximum.reduceat(edges.since + np.repeat(sizes, sizes) - 1 - position, starts)
    followers = names[src[starts]].tolist()
    followed = names[edges.dst].tolist()
    since = edges.since.tolist()
    batch: list[dict[str, Any]] = []
    held = 0
    for g, (begin, k, m) in enumerate(
        zip(starts.tolist(), sizes.tolist(), target.tolist(), strict=True)
    ):
        end = begin + k
        batch.append(
            {"s": followers[g], "k": k, "m": m, "d": followed[begin:end], "t": since[begin:end]}
        )
        held += k
        if held >= size:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


async def load_edges(
    parts: Operated,
    edges: Edges,
    *,
    batch: int = EDGES_PER_TRANSACTION,
    concurrency: int = CONCURRENT_TRANSACTIONS,
    progress: bool = True,
) -> LoadReport:
    """Write the edges to Neo4j, then rebuild the mirror of every user they touch."""
    started = time.perf_counter()
    users = edges.users
    with tqdm(total=len(users), desc="users", unit="user", disable=not progress) as bar:
        for chunk in batches(users, batch):
            await parts.maintenance.load_users(chunk)
            bar.update(len(chunk))
    created = 0
    slots = asyncio.Semaphore(concurrency)

    async def write(groups: list[dict[str, Any]], bar: tqdm) -> None:
        nonlocal created
        try:
            new = await parts.maintenance.load_follows(groups)
            created += new  # after the await: tasks add up one at a time
            bar.update(sum(group["k"] for group in groups))
        finally:
            slots.release()

    with tqdm(total=edges.count, desc="edges", unit="edge", disable=not progress) as bar:
        async with asyncio.TaskGroup() as group:
            for groups in follower_groups(edges, batch):
                await slots.acquire()
                group.create_task(write(groups, bar))
    await settle_mirror(parts, users, progress=progress)
    return LoadReport(len(users), edges.count, created, time.perf_counter() - started)


async def settle_mirror(parts: Operated, user_ids: Iterable[str], *, progress: bool = True) -> int:
    """After edges were written into Neo4j past the mirror: drop every user they touched
    under a floor read from Neo4j after the last commit, then rebuild only those that had
    something mirrored. The others were cold and stay cold: their first read builds them
    from Neo4j, which has every loaded edge, and the floor refuses a build that read Neo4j
    before the load ended (without it, such a build would install a list without the
    loaded edges, and nothing would correct it). Returns how many users were rebuilt."""
    ids = list(user_ids)
    floor = await parts.maintenance.clock()
    mirrored: list[str] = []
    with tqdm(total=len(ids), desc="drop", unit="user", disable=not progress) as bar:
        for chunk in batches(ids, DROP_BATCH_USERS):
            mirrored += await parts.maintenance.drop_from_mirror(chunk, floor=floor)
            bar.update(len(chunk))
    return await rebuild_mirror(parts, mirrored, progress=progress, dropped=True)


async def rebuild_mirror(
    parts: Operated, user_ids: Iterable[str], *, progress: bool = True, dropped: bool = False
) -> int:
    """Drop (unless ``dropped`` already) and rebuild these users' mirrors from Neo4j, in
    pipelined batches."""
    ids = list(user_ids)
    size = parts.settings.mirror.rebuild_batch_users
    built = 0
    slots = asyncio.Semaphore(MIRROR_BATCHES_AT_ONCE)

    async def build(chunk: list[str], bar: tqdm) -> None:
        nonlocal built
        try:
            if not dropped:
                await parts.maintenance.drop_from_mirror(chunk)
            done = await parts.core.mirror_sync.rebuild(chunk, tuple(Side))
            built += done  # after the await: tasks add up one at a time
            bar.update(len(chunk))
        finally:
            slots.release()

    with tqdm(total=len(ids), desc="mirror", unit="user", disable=not progress) as bar:
        async with asyncio.TaskGroup() as group:
            for chunk in batches(ids, size):
                await slots.acquire()
                group.create_task(build(chunk, bar))
    return built
