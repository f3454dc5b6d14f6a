"""Bulk loading: what lands in Neo4j and Redis is exactly the file's distinct edges."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.model import Side
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load_edges
from tests.support.paths import DATASETS
from tests.support.run import assert_consistent

UserIds = Callable[[str], str]


async def counts_everywhere(service: Services, users: list[str]) -> dict[str, tuple[int, int]]:
    """Per user (followers, following) as the service serves them (a loaded user nobody had
    read is cold, and this read builds it), asserting that the mirror then holds Neo4j's."""
    truth = {}
    for start in range(0, len(users), 500):
        batch = users[start : start + 500]
        snapshots = await service.core.neo4j.snapshots.snapshots(batch)
        for user in batch:
            served = await service.follow_pages.counts(user)
            mirrored = await service.core.redis.mirror_reads.counts(user)
            snap = snapshots[user]
            assert mirrored is not None, f"{user} was not mirrored by its read"
            assert (
                (served.followers, served.following)
                == (
                    mirrored.followers,
                    mirrored.following,
                )
                == (snap.totals.followers, snap.totals.following)
            )
            truth[user] = (snap.totals.followers, snap.totals.following)
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
    page = await service.follow_pages.followers(prefix + "a")
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


@pytest.mark.parametrize(
    ("text", "line", "cause"),
    [
        ("# a comment\n\na b 100\nb {c} 200\n", 4, "'{c}' is not a valid user id (1-64"),
        ("a b 100\nb c\n", 2, "expected 3 fields as on line 1, got 2"),
        ("a b 100\nb c 1700000000000\n", 2, "time '1700000000000' is in the future"),
    ],
)
def test_a_bad_row_ends_the_load_command_in_one_line_naming_file_and_line(
    tmp_path: Path, text: str, line: int, cause: str
) -> None:
    """The whole file is read before any store is touched: a bad row, even in a compressed
    file, ends the command in one line naming the file and the line."""
    path = tmp_path / "edges.txt.gz"
    path.write_bytes(gzip.compress(text.encode()))
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "load", str(path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"graphsvc: {path}:{line}: {cause}"), result.stderr


async def test_an_empty_file_loads_nothing(service: Services, tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("# no rows\n")
    report = await load_edges(service, read_edge_file(path), progress=False)
    assert (report.users, report.edges, report.created) == (0, 0, 0)


async def test_a_load_rebuilds_mirrored_users_and_leaves_cold_ones_cold(
    service: Services, tmp_path: Path, uid: UserIds, remember: Callable[[list[str]], None]
) -> None:
    """Into a database that has users: one whose mirror is warm is rebuilt with the loaded
    edges; one nobody read stays cold (its first read builds it from Neo4j)."""
    prefix = uid("warmcold") + "."
    warm, cold, fan = prefix + "warm", prefix + "cold", prefix + "fan"
    remember([warm, cold, fan])
    await service.relations.follow(fan, warm)
    assert await service.follow_pages.counts(warm)  # read: warm is mirrored now
    await service.core.redis.mirror_builds.drop([cold, fan])  # nothing of these is mirrored
    path = tmp_path / "edges.txt"
    path.write_text("fan cold 100\ncold warm 200\n")
    await load_edges(service, read_edge_file(path, prefix=prefix), progress=False)

    warm_counts = await service.core.redis.mirror_reads.counts(warm)
    assert warm_counts is not None and warm_counts.followers == 2  # rebuilt: fan and cold
    assert await service.core.redis.mirror_reads.counts(cold) is None  # cold, not built by the load
    page = await service.follow_pages.followers(warm)
    assert {e.user_id for e in page.items} == {fan, cold}
    assert (await service.follow_pages.counts(cold)).followers == 1  # built on its first read
    await assert_consistent(service, {warm, cold, fan})


async def test_a_snapshot_read_before_a_load_is_refused_after_it(
    service: Services, tmp_path: Path, uid: UserIds, remember: Callable[[list[str]], None]
) -> None:
    """A cold read that read Neo4j before the load's edges were committed and installs after
    the load must not leave a mirror without them: the load's floor refuses it."""
    prefix = uid("stale") + "."
    star, fan = prefix + "star", prefix + "fan"
    remember([star, fan])
    await service.relations.follow(fan + "0", star)
    remember([fan + "0"])
    await service.core.redis.mirror_builds.drop([star])
    stale = await service.core.neo4j.snapshots.snapshots([star], followers_limit=100)  # 1 follower
    path = tmp_path / "edges.txt"
    path.write_text("fan star 100\n")
    await load_edges(service, read_edge_file(path, prefix=prefix), progress=False)

    await service.core.redis.mirror_builds.install(
        stale.values(), [Side.FOLLOWERS]
    )  # the late install
    assert await service.core.redis.mirror_reads.counts(star) is None  # refused: still cold
    assert (await service.follow_pages.counts(star)).followers == 2
    page = await service.follow_pages.followers(star)
    assert {e.user_id for e in page.items} == {fan, fan + "0"}
    ttl = await service.core.redis.client.ttl(service.core.redis.mirror.key("m", star))
    assert ttl == -1, "a meta with counts must not expire"
