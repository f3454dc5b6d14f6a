"""Neo4j down, on a throwaway Neo4j of this module's own (the shared Redis, under its own
prefix): writes fail with a 503 and leave Redis untouched; warm reads keep being served. Once
it is back, the first write succeeds or is a clean 503, and the service is ready again (its
readiness polled as a load balancer polls it), and writes succeed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import httpx
import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import open_services
from graphsvc.domain.access import ALL_SCOPES
from graphsvc.ops.servers.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, Settings
from tests.support.driver import Driver, refused
from tests.support.helpers import free_port, sync_redis
from tests.support.served import until_ready

pytestmark = pytest.mark.skipif(
    not (shutil.which("java") and shutil.which("mvn")), reason="needs Java and Maven"
)
PREFIX = "flt:"


@pytest.fixture(scope="module")
def own_neo4j(
    tmp_path_factory: pytest.TempPathFactory, server_settings: Settings
) -> Iterator[tuple[Settings, LocalNeo4j]]:
    settings = server_settings.with_values(
        neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
        redis_prefix=PREFIX,
        neo4j_retry_seconds=2.0,
        neo4j_connect_timeout=1.0,
        rate_limits_enabled=False,
    )
    local = LocalServerSettings(
        state_dir=tmp_path_factory.mktemp("fault-neo4j"), neo4j_heap="512m", neo4j_pagecache="128m"
    )
    server = LocalNeo4j(settings, local)
    server.up(print)
    yield settings, server
    server.down(print)
    with sync_redis(settings) as client:
        for key in client.scan_iter(match=f"{PREFIX}*", count=10_000):
            client.unlink(key)


def mirror_state(settings: Settings) -> dict[str, object]:
    with sync_redis(settings, decode_responses=True) as client:
        return {
            key: client.dump(key)
            for key in sorted(client.scan_iter(match=f"{PREFIX}*", count=10_000))
            if not key.startswith(f"{PREFIX}recent")
        }


async def test_neo4j_down_writes_fail_cleanly_and_warm_reads_go_on(
    own_neo4j: tuple[Settings, LocalNeo4j],
) -> None:
    settings, server = own_neo4j
    async with open_services(settings) as service:
        # A key of this Neo4j's own (the session's key lives in the shared one).
        key = (await service.access.create(ALL_SCOPES, name="test_faults")).token
        app = create_app(settings, service)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        headers = {"Authorization": f"Bearer {key}"}
        async with Driver(
            httpx.AsyncClient(transport=transport, base_url="http://graphsvc", headers=headers)
        ) as graph:
            await until_ready(graph.http)  # a Neo4j just started plans its write statements
            await graph.follow_pairs(("f1", "star"), ("f2", "star"), ("f3", "star"))
            warm_page = await anext(graph.followers("star").pages())
            warm_counts = await graph.counts("star")
            before = mirror_state(settings)

            server.down(print)
            try:
                for write, user in (
                    (graph.follow, "f4"),
                    (graph.unfollow, "f1"),
                    (graph.block, "f2"),
                ):
                    error = await refused(write(user, "star"), 503, "neo4j_unavailable")
                    assert error.retry_after
                assert mirror_state(settings) == before  # nothing was written to Redis
                assert await anext(graph.followers("star").pages()) == warm_page
                assert await graph.counts("star") == warm_counts
                cold = await graph.http.get("/v1/users/nobody-warm/followers")
                assert cold.status_code == 503
            finally:
                server.up(print)

            first = await graph.http.put("/v1/users/f4/following/star")
            assert first.status_code in (200, 503), first.text
            if first.status_code == 503:
                assert first.headers["retry-after"], first.headers
            await until_ready(graph.http)
            assert (await graph.follow("f5", "star")).created
            assert (await graph.follow("f4", "star")).following
            assert (await graph.counts("star")).followers == 5
