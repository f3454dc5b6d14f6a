"""`graphsvc serve` under each HTTP server it offers (API_SERVER): the same answers over TCP,
the lifespan run (services opened, so keys and pages work), and a clean stop on SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Callable

import httpx
import pytest

from graphsvc.client import GraphClient
from graphsvc.settings import Settings
from graphsvc.wire.schemas import FollowBody
from tests.support.driver import full_counts
from tests.support.helpers import start_api

UserIds = Callable[[str], str]


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_each_server_serves_the_api(
    server: str, server_settings: Settings, service_key: str, uid: UserIds
) -> None:
    process, url = start_api(server_settings, API_SERVER=server)
    try:
        a, b = uid("a"), uid("b")
        with GraphClient(url, api_key=service_key) as graph:
            assert graph.follow(a, b) == FollowBody(following=True, created=True)
            assert [item.user_id for item in graph.followers(b, page_size=5)] == [a]
            assert graph.counts(b) == full_counts(1, 0)
        headers = {"Authorization": f"Bearer {service_key}"}
        with httpx.Client(base_url=url, timeout=10, headers=headers) as http:
            bad = http.get(f"/v1/users/{b}/followers", params={"limit": "x"})
            assert bad.status_code == 422
            assert (
                http.get(f"/v1/users/{b}/followers", headers={"Authorization": ""}).status_code
                == 401
            )
    finally:
        process.terminate()
        # stopped in time; uvicorn re-raises the SIGTERM once shut down, granian exits 0
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
