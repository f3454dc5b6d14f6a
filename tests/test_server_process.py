"""The real thing: `graphsvc serve` in its own process, spoken to over TCP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from helpers import free_port, full_counts

from graphsvc.settings import Settings

UserIds = Callable[[str], str]


@pytest.fixture(scope="module")
def base_url(server_settings: Settings) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "NEO4J_URI": server_settings.neo4j_uri,
        "REDIS_URL": server_settings.redis_url,
        "REDIS_CLUSTER": str(int(server_settings.redis_cluster)),
        "API_PORT": str(port),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "graphsvc.ops.cli", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            raise AssertionError("the API did not start")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_served_api_follows_pages_and_counts(base_url: str, uid: UserIds) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    with httpx.Client(base_url=base_url, timeout=10) as http:
        assert http.put(f"/v1/users/{a}/following/{c}").json() == {
            "following": True,
            "created": True,
        }
        assert http.put(f"/v1/users/{b}/following/{c}").json()["created"] is True
        page = http.get(f"/v1/users/{c}/followers", params={"limit": 1}).json()
        assert [i["user_id"] for i in page["items"]] == [b]
        rest = http.get(f"/v1/users/{c}/followers", params={"cursor": page["next_cursor"]}).json()
        assert [i["user_id"] for i in rest["items"]] == [a] and rest["next_cursor"] is None
        assert http.get(f"/v1/users/{c}/counts").json() == full_counts(2, 0)
        bad = http.put(f"/v1/users/{a}/following/not%20valid")
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_user_id"
        assert "swagger" in http.get("/docs").text.lower()
