"""Bulk loading: what lands in Neo4j and Redis is exactly the file's distinct edges."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops.edge_files import read_edge_file
from graphsvc.ops.loader import load_edges

UserIds = Callable[[str], str]
DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


async def counts_everywhere(service: Services, users: list[str]) -> dict[str, tuple[int, int]]:
    """Per user (followers, following), asserting that Redis and Neo4j agree."""
    truth = {}
    for start in range(0, len(users), 500):
        batch = users[start : start + 500]
        snapshots = await service.neo4j.snapshots.snapshots(batch)
        for user in batch:
            mirrored = await service.redis.mirror.counts(user)
            snap = snapshots[user]
            assert mirrored is not None, f"{user} was not mirrored by the load"
            assert (mirrored.followers, mirrored.following) == (
                snap.followers_count,
                snap.following_count,
            )
            truth[user] = (snap.followers_count, snap.following_count)
    return truth


async def test_small_file_with_loops_and_duplicates(
    service: Services, tmp_path: Path, uid: UserIds, remember: Callable[[list[str]], None]
) -> None:
    prefix = uid("small") + "."
    path = tmp_path / "edges.txt"
    path.write_text("a b 100\nb a 200\na a 300\na b 150\nc a 50\n# done\n")
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    assert (edges.self_loops, edges.duplicates, len(edges.edges)) == (1, 1, 3)
    report = await load_edges(service, edges, progress=False)
    assert (report.created, report.edges) == (3, 3)
    got = await counts_everywhere(service, edges.users)
    assert got == {prefix + "a": (2, 1), prefix + "b": (1, 1), prefix + "c": (0, 1)}
    page = await service.lists.followers(prefix + "a")
    assert [(e.user_id, e.since) for e in page.items] == [
        (prefix + "b", 200_000_000),
        (prefix + "c", 50_000_000),
    ]
    again = await load_edges(service, edges, progress=False)  # loading twice changes nothing
    assert again.created == 0
    assert await counts_everywhere(service, edges.users) == got


@pytest.mark.skipif(not (DATASETS / "email-Eu-core.txt").exists(), reason="shared/ datasets absent")
async def test_real_graph_matches_networkx(
    service: Services, uid: UserIds, remember: Callable[[list[str]], None]
) -> None:
    """SNAP email-Eu-core: 25,571 lines with 642 self-loops (shared/README.md)."""
    path = DATASETS / "email-Eu-core.txt"
    prefix = uid("eu") + "."
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    assert edges.lines == 25_571 and edges.self_loops == 642

    graph = nx.DiGraph()
    for line in path.read_text().split("\n"):
        if line.strip():
            src, dst = line.split()[:2]
            if src != dst:
                graph.add_edge(prefix + src, prefix + dst)
    assert len(edges.edges) == graph.number_of_edges()

    report = await load_edges(service, edges, progress=False)
    assert report.created == graph.number_of_edges()
    got = await counts_everywhere(service, edges.users)
    expected = {n: (graph.in_degree(n), graph.out_degree(n)) for n in graph.nodes}
    assert got == expected
