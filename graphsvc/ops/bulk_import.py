"""Initial load of an empty local database at full speed.

Transactions cannot reach 100k edges/s on a small machine; Neo4j's offline importer can. When
the target is the local server this project runs and its database is empty, the loader
writes the importer's CSV files, stops Neo4j, imports and restarts it, and meanwhile builds
the Redis mirror straight from the same edges: in an empty database they are the whole truth.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from graphsvc.bootstrap import Services
from graphsvc.domain.model import Counts, Side
from graphsvc.ops.edge_files import EdgeSet, LoadReport, batches
from graphsvc.ops.local_servers import LocalNeo4j


def write_import_files(edges: EdgeSet, folder: Path, *, progress: bool) -> tuple[Path, Path]:
    """nodes.csv (id, clock past the user's newest follow) and relationships.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    clocks: dict[str, int] = dict.fromkeys(edges.users, 0)
    relationships = folder / "follows.csv"
    with (
        relationships.open("w", encoding="ascii") as out,
        tqdm(total=len(edges.edges), desc="csv", unit="edge", disable=not progress) as bar,
    ):
        out.write(":START_ID,:END_ID,since:long\n")
        for count, ((src, dst), since) in enumerate(edges.edges.items(), start=1):
            out.write(f"{src},{dst},{since}\n")
            if since > clocks[src]:
                clocks[src] = since
            if count % 100_000 == 0:
                bar.update(100_000)
        bar.update(len(edges.edges) % 100_000)
    nodes = folder / "users.csv"
    with nodes.open("w", encoding="ascii") as out:
        out.write("id:ID,clk:long\n")
        out.writelines(f"{uid},{clock}\n" for uid, clock in clocks.items())
    return nodes, relationships


def _newest(pairs: list[tuple[int, str]], keep: int) -> list[tuple[int, str]]:
    return heapq.nlargest(keep, pairs) if len(pairs) > keep else sorted(pairs, reverse=True)


async def mirror_from_edges(services: Services, edges: EdgeSet, at: int, *, progress: bool) -> None:
    """Install every user's counts and newest lists, as a Neo4j snapshot at ``at`` would."""
    keep = services.settings.hot_list_cap + 1
    followers: dict[str, list[tuple[int, str]]] = defaultdict(list)
    following: dict[str, list[tuple[int, str]]] = defaultdict(list)
    friends: dict[str, int] = defaultdict(int)
    pairs = edges.edges
    for (src, dst), since in pairs.items():
        followers[dst].append((since, src))
        following[src].append((since, dst))
        if (dst, src) in pairs:
            friends[src] += 1
    users = edges.users
    with tqdm(total=len(users), desc="mirror", unit="user", disable=not progress) as bar:
        for batch in batches(users, 5_000):
            lists = []
            for uid in batch:
                fr, fg = followers.get(uid, []), following.get(uid, [])
                # A freshly imported graph has only active users.
                counts = Counts(len(fr), len(fg), len(fr), len(fg), friends.get(uid, 0))
                lists.append((uid, Side.FOLLOWERS, at, counts, _newest(fr, keep)))
                lists.append((uid, Side.FOLLOWING, at, counts, _newest(fg, keep)))
            await services.redis.mirror.install_lists(lists)
            bar.update(len(batch))


async def import_edges(
    services: Services,
    edges: EdgeSet,
    server: LocalNeo4j,
    *,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> LoadReport:
    started = time.perf_counter()
    nodes, relationships = write_import_files(edges, server.home / "import", progress=progress)
    # The server goes down first: the mirror's snapshot time is taken after the last write
    # Neo4j could accept, so any write stamped earlier (and erased by the import) is fenced out.
    await asyncio.to_thread(server.down, say)
    at = int(time.time() * 1_000_000)  # the local server and this process share the clock
    removed = await services.redis.mirror.clear()  # an empty database leaves only stale mirrors
    if removed:
        say(f"mirror: removed {removed:,} stale keys")
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(asyncio.to_thread(server.import_csv, nodes, relationships, say))
            group.create_task(mirror_from_edges(services, edges, at, progress=progress))
    except BaseExceptionGroup as failed:
        # Never leave a mirror of edges that Neo4j does not have.
        await services.redis.mirror.clear()
        raise failed.exceptions[0] from None
    await services.neo4j.store.apply_schema()
    await services.neo4j.store.await_indexes()
    nodes.unlink()
    relationships.unlink()
    return LoadReport(
        len(edges.users), len(edges.edges), len(edges.edges), time.perf_counter() - started
    )
