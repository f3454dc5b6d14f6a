"""Loading follow graphs: the fastest safe way in, and rebuilding the mirror of what was loaded.

Into an empty local database, large files go through Neo4j's offline importer
(``bulk_import``); everything else goes in batched transactions that lock followers as live
writes do, after which the mirror of every user touched is rebuilt from Neo4j.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from tqdm import tqdm

from graphsvc.bootstrap import Services
from graphsvc.domain.model import Side
from graphsvc.ops.bulk_import import import_edges
from graphsvc.ops.edge_files import EdgeSet, LoadReport, batches
from graphsvc.ops.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, get_local_server_settings

IMPORT_MIN_EDGES = 200_000  # below this, restarting Neo4j costs more than transactions


async def load(
    services: Services,
    edges: EdgeSet,
    *,
    local: LocalServerSettings | None = None,
    progress: bool = True,
    online: bool = False,
    say: Callable[[str], None] = print,
) -> LoadReport:
    """Load edges the fastest safe way: the offline importer into an empty local database
    (for large loads, where it pays for a server restart), otherwise transactions.
    ``online`` forces transactions; ``local`` names the local servers (default: from the
    environment)."""
    server = LocalNeo4j(services.settings, local or get_local_server_settings())
    large = len(edges.edges) >= IMPORT_MIN_EDGES
    empty = large and not online and server.managed()
    if empty and await services.neo4j.snapshots.user_count() == 0:
        say("neo4j: the database is empty: bulk import (the server restarts)")
        return await import_edges(services, edges, server, progress=progress, say=say)
    return await load_edges(services, edges, progress=progress)


async def load_edges(
    services: Services, edges: EdgeSet, *, batch: int = 10_000, progress: bool = True
) -> LoadReport:
    """Write the edges to Neo4j, then rebuild the mirror of every user they touch."""
    started = time.perf_counter()
    users = edges.users
    with tqdm(total=len(users), desc="users", unit="user", disable=not progress) as bar:
        for chunk in batches(users, batch):
            await services.neo4j.bulk.load_users(chunk)
            bar.update(len(chunk))
    rows = [{"s": s, "d": d, "t": t} for (s, d), t in edges.edges.items()]
    created = 0
    with tqdm(total=len(rows), desc="edges", unit="edge", disable=not progress) as bar:
        for chunk in batches(rows, batch):
            created += await services.neo4j.bulk.load_edges(chunk)
            bar.update(len(chunk))
    await rebuild_mirror(services, users, progress=progress)
    return LoadReport(len(users), len(rows), created, time.perf_counter() - started)


async def rebuild_mirror(
    services: Services, user_ids: Iterable[str], *, progress: bool = True
) -> int:
    """Drop and rebuild these users' mirrors from Neo4j, in pipelined batches."""
    ids = list(user_ids)
    size = services.settings.rebuild_batch_users
    built = 0
    with tqdm(total=len(ids), desc="mirror", unit="user", disable=not progress) as bar:
        for chunk in batches(ids, size):
            await services.redis.mirror.drop(chunk)
            built += await services.mirror_sync.rebuild(chunk, tuple(Side))
            bar.update(len(chunk))
    return built
