"""Follow, unfollow and counts through the HTTP API, against the real servers."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.wire.schemas import FollowBody, PageBody, UnfollowBody
from tests.support.driver import Driver, full_counts, refused

UserIds = Callable[[str], str]


async def test_follow_is_idempotent(driver: Driver, uid: UserIds) -> None:
    a, b = uid("a"), uid("b")
    assert await driver.follow(a, b) == FollowBody(following=True, created=True)
    assert driver.last_status == 200
    assert await driver.follow(a, b) == FollowBody(following=True, created=False)
    assert driver.last_status == 200

    assert await driver.counts(a) == full_counts(0, 1)
    assert await driver.counts(b) == full_counts(1, 0)
    assert await driver.ids(b, "followers") == [a]
    assert await driver.ids(a, "following") == [b]

    item = (await anext(driver.followers(b).pages())).items[0]
    since = item.since
    assert since.tzinfo is not None and since.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - since) < timedelta(minutes=5)


async def test_repeat_follow_keeps_the_original_time(driver: Driver, uid: UserIds) -> None:
    a, b = uid("a"), uid("b")
    await driver.follow(a, b)
    before = [item async for item in driver.followers(b)]
    await driver.follow(a, b)
    assert [item async for item in driver.followers(b)] == before


async def test_unfollow_is_idempotent(driver: Driver, uid: UserIds) -> None:
    a, b = uid("a"), uid("b")
    await driver.follow(a, b)
    assert await driver.unfollow(a, b) == UnfollowBody(following=False, removed=True)
    assert driver.last_status == 200
    assert await driver.unfollow(a, b) == UnfollowBody(following=False, removed=False)
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(b) == full_counts(0, 0)
    assert await driver.ids(b, "followers") == []
    assert await driver.ids(a, "following") == []


async def test_refollow_after_unfollow_is_newest(driver: Driver, uid: UserIds) -> None:
    target, a, b = uid("target"), uid("a"), uid("b")
    await driver.follow(a, target)
    await driver.follow(b, target)
    await driver.unfollow(a, target)
    assert (await driver.follow(a, target)).created is True
    assert await driver.ids(target, "followers") == [a, b]
    assert await driver.counts(target) == full_counts(2, 0)


async def test_unfollow_of_a_missing_edge_between_known_users(driver: Driver, uid: UserIds) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await driver.follow(a, c)
    await driver.follow(b, c)
    assert await driver.unfollow(a, b) == UnfollowBody(following=False, removed=False)
    assert await driver.counts(a) == full_counts(0, 1)
    assert await driver.counts(b) == full_counts(0, 1)


async def test_unknown_user_has_zero_counts_and_empty_lists(
    driver: Driver, uid: UserIds, backends: Services
) -> None:
    ghost = uid("ghost")
    assert await driver.counts(ghost) == full_counts(0, 0)
    empty = PageBody(items=[], next_cursor=None)
    assert [page async for page in driver.followers(ghost).pages()] == [empty]
    assert [page async for page in driver.following(ghost).pages()] == [empty]
    unfollow = await driver.unfollow(ghost, uid("other"))
    assert unfollow == UnfollowBody(following=False, removed=False)
    # Asking about unknown users must not create mirror entries for them.
    assert await backends.core.redis.client.exists(*backends.core.redis.mirror.keys(ghost)) == 0


async def test_self_follow_is_rejected_and_changes_nothing(driver: Driver, uid: UserIds) -> None:
    a = uid("a")
    for write in (driver.follow, driver.unfollow):
        # a rule the schema cannot state: a 403, not a 422
        error = await refused(write(a, a), 403, "self_follow")
        assert a in error.message
    assert await driver.counts(a) == full_counts(0, 0)


BAD_IDS = ["a%20b", "x" * 65, "a%7Bb%7D", "%C3%A9mile", "a*b", "a:b", "...", "a%0A"]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_bad_ids_are_422_naming_the_id(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds, bad: str
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
    assert await driver.counts(good) == full_counts(0, 0)


async def test_a_trailing_slash_is_not_redirected(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    """A 307 to the path without its slash could lead a client that follows it elsewhere."""
    a, b = uid("a"), uid("b")
    for method in ("PUT", "DELETE", "GET"):
        response = await client.request(method, f"/v1/users/{a}/following/{b}/")
        assert response.status_code in (404, 405) and "location" not in response.headers
    assert await driver.counts(a) == full_counts(0, 0)


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


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_api_pages_work_offline(client: httpx.AsyncClient, page: str) -> None:
    """Swagger UI and ReDoc load nothing from another host: every script, style sheet and
    icon they name is served by the app itself."""
    html = await client.get(page)
    assert html.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', html.text)
    assert assets and not [url for url in assets if "://" in url or url.startswith("//")]
    for url in assets:
        answer = await client.get(url)
        assert answer.status_code == 200, url
        assert len(answer.content) > 1_000, url
    assert (await client.get("/openapi.json")).status_code == 200


async def test_health_reports_both_stores(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"neo4j": "ok", "redis": "ok"}
