"""`graphsvc serve` under each HTTP server it offers (API_SERVER): the same answers over TCP,
the lifespan run (services opened, so keys and pages work), and a clean stop on SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Callable

import httpx
import pytest
from helpers import full_counts, start_api

from graphsvc.settings import Settings

UserIds = Callable[[str], str]


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_each_server_serves_the_api(
    server: str, server_settings: Settings, service_key: str, uid: UserIds
) -> None:
    process, url = start_api(server_settings, API_SERVER=server)
    try:
        a, b = uid("a"), uid("b")
        headers = {"Authorization": f"Bearer {service_key}"}
        with httpx.Client(base_url=url, timeout=10, headers=headers) as http:
            assert http.put(f"/v1/users/{a}/following/{b}").json()["created"] is True
            page = http.get(f"/v1/users/{b}/followers", params={"limit": 5}).json()
            assert [item["user_id"] for item in page["items"]] == [a]
            assert http.get(f"/v1/users/{b}/counts").json() == full_counts(1, 0)
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
