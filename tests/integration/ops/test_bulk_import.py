"""The offline-import path of `graphsvc load`, on a throwaway local Neo4j of its own."""

from __future__ import annotations

import collections
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from graphsvc.bootstrap import open_services
from graphsvc.ops.data import edge_files, loader
from graphsvc.ops.data.generate import generate
from graphsvc.ops.servers.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, Settings
from tests.support.helpers import free_port, sync_redis

pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(
        not (shutil.which("java") and shutil.which("mvn")), reason="needs Java and Maven"
    ),
]


@pytest.fixture(scope="module")
def empty_local(tmp_path_factory: pytest.TempPathFactory) -> LocalServerSettings:
    return LocalServerSettings(
        state_dir=tmp_path_factory.mktemp("import-neo4j"), neo4j_heap="1g", neo4j_pagecache="256m"
    )


@pytest.fixture(scope="module")
def empty_server(server_settings: Settings, empty_local: LocalServerSettings) -> Iterator[Settings]:
    settings = server_settings.with_values(
        neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
        redis_prefix="imp:",  # the import clears every mirror key under its prefix
        hot_list_cap=40,  # celebrities' lists are cut: their boundaries are checked too
    )
    server = LocalNeo4j(settings, empty_local)
    server.up(print)
    yield settings
    server.down(print)
    with sync_redis(settings) as client:
        for key in client.scan_iter(match="imp:*", count=10_000):
            client.unlink(key)


@pytest.fixture
async def service(empty_server: Settings) -> AsyncIterator:
    async with open_services(empty_server) as opened:
        yield opened


async def test_bulk_import_matches_the_file(
    service,
    empty_server: Settings,
    empty_local: LocalServerSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = list(generate(600, 9_000, seed=4, celebrities=2))
    path = tmp_path / "graph.txt"
    extra = "7 7 1700000000\n3 9 1700000001\n"  # a self-loop, and maybe a duplicate
    path.write_text("".join(f"{s} {d} {t}\n" for s, d, t in rows) + extra)
    edges = edge_files.read_edge_file(path)
    assert edges.self_loops == 1
    assert len(edges.edges) == len({(s, d) for s, d, _ in rows} | {("3", "9")})

    assert LocalNeo4j(empty_server, empty_local).managed()
    assert await service.core.neo4j.snapshots.user_count() == 0
    monkeypatch.setattr(loader, "IMPORT_MIN_EDGES", 1)
    said: list[str] = []
    report = await loader.load(service, edges, local=empty_local, progress=False, say=said.append)
    assert any("bulk import" in line for line in said), said
    assert report.edges == report.created == len(edges.edges)

    followers = collections.Counter(d for _, d in edges.edges)
    following = collections.Counter(s for s, _ in edges.edges)
    users = edges.users
    truth = await service.core.neo4j.snapshots.snapshots(users)
    for uid in users:
        expected = (followers[uid], following[uid])
        assert (truth[uid].totals.followers, truth[uid].totals.following) == expected, uid
        mirrored = await service.core.redis.mirror_reads.counts(uid)
        assert (mirrored.followers, mirrored.following) == expected, uid
    assert await service.consistency.check(users) == []

    # The imported clocks keep live writes after the load ordered after it.
    await service.relations.follow("fresh", "0")
    assert (await service.follow_pages.followers("0", limit=1)).items[0].user_id == "fresh"
    assert await service.consistency.check(["fresh", "0"]) == []
