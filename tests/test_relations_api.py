"""Follow, unfollow and counts through the HTTP API, against the real servers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from helpers import counts, full_counts, ids

from graphsvc.bootstrap import Services

UserIds = Callable[[str], str]


async def test_follow_is_idempotent(client: httpx.AsyncClient, uid: UserIds) -> None:
    a, b = uid("a"), uid("b")
    first = await client.put(f"/v1/users/{a}/following/{b}")
    assert first.status_code == 200
    assert first.json() == {"following": True, "created": True}
    again = await client.put(f"/v1/users/{a}/following/{b}")
    assert again.status_code == 200
    assert again.json() == {"following": True, "created": False}

    assert await counts(client, a) == full_counts(0, 1)
    assert await counts(client, b) == full_counts(1, 0)
    assert await ids(client, b, "followers") == [a]
    assert await ids(client, a, "following") == [b]

    item = (await client.get(f"/v1/users/{b}/followers")).json()["items"][0]
    since = datetime.fromisoformat(item["since"].replace("Z", "+00:00"))
    assert item["since"].endswith("Z")
    assert abs(datetime.now(UTC) - since) < timedelta(minutes=5)


async def test_repeat_follow_keeps_the_original_time(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await client.put(f"/v1/users/{a}/following/{b}")
    before = (await client.get(f"/v1/users/{b}/followers")).json()["items"]
    await client.put(f"/v1/users/{a}/following/{b}")
    assert (await client.get(f"/v1/users/{b}/followers")).json()["items"] == before


async def test_unfollow_is_idempotent(client: httpx.AsyncClient, uid: UserIds) -> None:
    a, b = uid("a"), uid("b")
    await client.put(f"/v1/users/{a}/following/{b}")
    first = await client.delete(f"/v1/users/{a}/following/{b}")
    assert first.status_code == 200
    assert first.json() == {"following": False, "removed": True}
    again = await client.delete(f"/v1/users/{a}/following/{b}")
    assert again.json() == {"following": False, "removed": False}
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, b) == full_counts(0, 0)
    assert await ids(client, b, "followers") == []
    assert await ids(client, a, "following") == []


async def test_refollow_after_unfollow_is_newest(client: httpx.AsyncClient, uid: UserIds) -> None:
    target, a, b = uid("target"), uid("a"), uid("b")
    await client.put(f"/v1/users/{a}/following/{target}")
    await client.put(f"/v1/users/{b}/following/{target}")
    await client.delete(f"/v1/users/{a}/following/{target}")
    again = await client.put(f"/v1/users/{a}/following/{target}")
    assert again.json()["created"] is True
    assert await ids(client, target, "followers") == [a, b]
    assert await counts(client, target) == full_counts(2, 0)


async def test_unfollow_of_a_missing_edge_between_known_users(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await client.put(f"/v1/users/{a}/following/{c}")
    await client.put(f"/v1/users/{b}/following/{c}")
    response = await client.delete(f"/v1/users/{a}/following/{b}")
    assert response.json() == {"following": False, "removed": False}
    assert await counts(client, a) == full_counts(0, 1)
    assert await counts(client, b) == full_counts(0, 1)


async def test_unknown_user_has_zero_counts_and_empty_lists(
    client: httpx.AsyncClient, uid: UserIds, backends: Services
) -> None:
    ghost = uid("ghost")
    assert await counts(client, ghost) == full_counts(0, 0)
    for side in ("followers", "following"):
        body = (await client.get(f"/v1/users/{ghost}/{side}")).json()
        assert body == {"items": [], "next_cursor": None}
    unfollow = await client.delete(f"/v1/users/{ghost}/following/{uid('other')}")
    assert unfollow.json() == {"following": False, "removed": False}
    # Asking about unknown users must not create mirror entries for them.
    assert await backends.redis.client.exists(*backends.redis.mirror.keys(ghost)) == 0


async def test_self_follow_is_rejected_and_changes_nothing(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a = uid("a")
    for method in ("PUT", "DELETE"):
        response = await client.request(method, f"/v1/users/{a}/following/{a}")
        assert response.status_code == 403  # a rule the schema cannot state: not a 422
        assert response.json()["error"]["code"] == "self_follow"
        assert a in response.json()["error"]["message"]
    assert await counts(client, a) == full_counts(0, 0)


BAD_IDS = ["a%20b", "x" * 65, "a%7Bb%7D", "%C3%A9mile", "a*b", "a:b", "...", "a%0A"]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_bad_ids_are_422_naming_the_id(
    client: httpx.AsyncClient, uid: UserIds, bad: str
) -> None:
    good = uid("good")
    shown = httpx.URL(f"/{bad}").path[1:]  # the decoded id, as the message shows it
    for path, name in (
        (f"/v1/users/{bad}/following/{good}", "user_id"),
        (f"/v1/users/{good}/following/{bad}", "target_id"),
    ):
        for method in ("PUT", "DELETE"):
            response = await client.request(method, path)
            assert response.status_code == 422, (method, path, response.text)
            error = response.json()["error"]
            assert error["code"] == "invalid_user_id"
            assert name in error["message"] and repr(shown)[1:-1][:30] in error["message"]
    for side in ("followers", "following", "counts"):
        response = await client.get(f"/v1/users/{bad}/{side}")
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_user_id"
    assert await counts(client, good) == full_counts(0, 0)


async def test_a_trailing_slash_is_not_redirected(client: httpx.AsyncClient, uid: UserIds) -> None:
    """A 307 to the path without its slash could lead a client that follows it elsewhere."""
    a, b = uid("a"), uid("b")
    for method in ("PUT", "DELETE", "GET"):
        response = await client.request(method, f"/v1/users/{a}/following/{b}/")
        assert response.status_code in (404, 405) and "location" not in response.headers
    assert await counts(client, a) == full_counts(0, 0)


async def test_errors_share_one_shape(client: httpx.AsyncClient) -> None:
    for response in (
        await client.get("/v1/nothing-here"),
        await client.post("/v1/users/a/following/b"),
        await client.get("/v1/users/a/followers", params={"limit": "many"}),
        await client.get("/v1/users/a/followers", params={"cursor": "nope"}),
    ):
        assert response.status_code in (400, 404, 405, 422)
        body = response.json()
        assert set(body) == {"error"}
        assert set(body["error"]) == {"code", "message"}
        assert body["error"]["message"]


async def test_openapi_documents_every_route(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    paths = spec["paths"]
    assert set(paths["/v1/users/{user_id}/following/{target_id}"]) == {"put", "delete"}
    for route in ("followers", "following", "counts"):
        operation = paths[f"/v1/users/{{user_id}}/{route}"]["get"]
        assert operation["summary"]
        assert "422" in operation["responses"]
    docs = await client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


async def test_health_reports_both_stores(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"neo4j": "ok", "redis": "ok"}
