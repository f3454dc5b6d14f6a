"""The lean routes (``api/http/lean.py``) admit a request as every route does, over the real
servers: the key before any parameter is read, then the caller's budget, spent and shown."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import ALL_SCOPES

UserIds = Callable[[str], str]


@pytest.mark.parametrize("key", [None, "gs_not-a-key"])
async def test_the_lean_routes_check_the_key_first(
    make_client: Callable[..., httpx.AsyncClient], key: str | None, uid: UserIds
) -> None:
    user = uid("x")
    async with make_client(key=key) as client:
        for method, path in (
            ("GET", f"/v1/users/{user}/followers?limit=abc"),
            ("GET", f"/v1/users/{user}/following?celebrities_only=maybe"),
            ("GET", "/v1/users/not%20valid/counts"),
            ("PUT", f"/v1/users/{user}/following/{user}"),
            ("DELETE", "/v1/users/not%20valid/following/x"),
            ("GET", f"/v1/users/{user}/relationships"),
        ):
            response = await client.request(method, path)
            assert response.status_code == 401, (method, path, response.text)
            assert response.json()["error"]["code"] == "unauthenticated"


async def test_the_lean_routes_spend_and_show_the_budget(
    make_client: Callable[..., httpx.AsyncClient], backends: Services, uid: UserIds
) -> None:
    user = uid("x")
    key = (await backends.access.create(ALL_SCOPES, name="budget of lean routes")).token
    limited = {"rate_limits_enabled": True, "rate_limit_reads": "2 per 60 seconds"}
    async with make_client(key=key, **limited) as client:
        first = await client.get(f"/v1/users/{user}/counts")
        assert first.status_code == 200
        assert first.headers["ratelimit-limit"] == "2"
        assert first.headers["ratelimit-remaining"] == "1"
        await client.get(f"/v1/users/{user}/followers")
        refused = await client.get(f"/v1/users/{user}/following?limit=abc")
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"]
