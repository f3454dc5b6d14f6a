"""Neo4j down, on a throwaway Neo4j of this module's own (the shared Redis, under its own
prefix): writes fail with a 503 and leave Redis untouched; warm reads keep being served."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import httpx
import pytest
from helpers import free_port, sync_redis

from graphsvc.api.app import create_app
from graphsvc.bootstrap import open_services
from graphsvc.domain.access import ALL_SCOPES
from graphsvc.ops.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, Settings

pytestmark = pytest.mark.skipif(
    not (shutil.which("java") and shutil.which("mvn")), reason="needs Java and Maven"
)
PREFIX = "flt:"


@pytest.fixture(scope="module")
def own_neo4j(
    tmp_path_factory: pytest.TempPathFactory, server_settings: Settings
) -> Iterator[tuple[Settings, LocalNeo4j]]:
    settings = server_settings.with_values(**{
        "neo4j_uri": f"bolt://127.0.0.1:{free_port()}",
        "redis_prefix": PREFIX,
        "neo4j_retry_seconds": 2.0,
        "neo4j_connect_timeout": 1.0,
        "rate_limits_enabled": False,
    })  # fmt: skip
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
        async with httpx.AsyncClient(
            transport=transport, base_url="http://graphsvc", headers=headers
        ) as client:
            for fan in ("f1", "f2", "f3"):
                assert (await client.put(f"/v1/users/{fan}/following/star")).status_code == 200
            warm_page = (await client.get("/v1/users/star/followers")).json()
            warm_counts = (await client.get("/v1/users/star/counts")).json()
            before = mirror_state(settings)

            server.down(print)
            try:
                for method, path in (
                    ("PUT", "/v1/users/f4/following/star"),
                    ("DELETE", "/v1/users/f1/following/star"),
                    ("PUT", "/v1/users/f2/blocks/star"),
                ):
                    response = await client.request(method, path)
                    assert response.status_code == 503, (path, response.text)
                    assert response.json()["error"]["code"] == "neo4j_unavailable"
                    assert response.headers["Retry-After"]
                assert mirror_state(settings) == before  # nothing was written to Redis
                assert (await client.get("/v1/users/star/followers")).json() == warm_page
                assert (await client.get("/v1/users/star/counts")).json() == warm_counts
                cold = await client.get("/v1/users/nobody-warm/followers")
                assert cold.status_code == 503
            finally:
                server.up(print)

            response = await client.put("/v1/users/f4/following/star")
            assert response.status_code == 200, response.text
            assert (await client.get("/v1/users/star/counts")).json()["followers"] == 4
