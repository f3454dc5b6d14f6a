"""The fast lane of plain GET routes answers exactly as FastAPI's own handling does: the same
app is asked the same questions with and without the lane, over the real servers."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from graphsvc.api.access import Guard
from graphsvc.api.app import create_app
from graphsvc.api.fast_routes import FastLane
from graphsvc.bootstrap import Services

UserIds = Callable[[str], str]


def without_lanes(app: object) -> int:
    """Put every route's FastAPI handler back in place of its lane; how many were replaced."""
    replaced = 0
    for route in app.router.routes:  # type: ignore[attr-defined]
        guard = getattr(route, "app", None)
        holder = guard if isinstance(guard, Guard) else route
        if isinstance(holder.app, FastLane):
            holder.app = holder.app.fallback
            replaced += 1
    return replaced


async def test_the_lane_and_fastapi_answer_alike(
    make_service: Callable[..., Services], service_key: str, uid: UserIds
) -> None:
    service = make_service(rate_limits_enabled=False)
    fast, plain = create_app(service.settings, service), create_app(service.settings, service)
    assert without_lanes(plain) >= 10  # the lists, counts, relationships, follow, unfollow...
    headers = {"Authorization": f"Bearer {service_key}"}
    star, fans = uid("star"), [uid(f"fan{n}") for n in range(3)]

    def client(app: object) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://graphsvc", headers=headers
        )

    async with client(fast) as a, client(plain) as b:
        for fan in fans:
            assert (await a.put(f"/v1/users/{fan}/following/{star}")).status_code == 200
        assert (await a.put(f"/v1/users/{star}/following/{fans[0]}")).status_code == 200
        first = (await a.get(f"/v1/users/{star}/followers", params={"limit": 1})).json()
        asked = [
            f"/v1/users/{star}/followers",
            f"/v1/users/{star}/followers?limit=2",
            f"/v1/users/{star}/followers?limit=02",
            f"/v1/users/{star}/followers?limit=0",
            f"/v1/users/{star}/followers?limit=abc",
            f"/v1/users/{star}/followers?limit=",
            f"/v1/users/{star}/followers?limit=-1",
            f"/v1/users/{star}/followers?limit=1&limit=2",
            f"/v1/users/{star}/followers?limit=1&cursor={first['next_cursor']}",
            f"/v1/users/{star}/followers?cursor=tampered.cursor",
            f"/v1/users/{star}/followers?not_followed_back=true",
            f"/v1/users/{star}/followers?not_followed_back=1",
            f"/v1/users/{star}/followers?not_followed_back=yes",
            f"/v1/users/{star}/followers?not_followed_back=False",
            f"/v1/users/{star}/followers?not_followed_back=maybe",
            f"/v1/users/{star}/followers?unknown=1",
            f"/v1/users/{fans[0]}/following?celebrities_only=0&not_following_back=true",
            f"/v1/users/{star}/counts",
            "/v1/users/not%20valid/counts",
            f"/v1/users/{star}/relationships?ids={','.join(fans)}",
            f"/v1/users/{star}/relationships",
            f"/v1/users/{star}/relationships?ids=",
            f"/v1/users/{star}/relationships?ids=a,,b",
            f"/v1/users/{star}/familiar-followers/{fans[1]}?limit=5",
            f"/v1/users/{star}/common-followers/{fans[0]}?limit=1",
        ]
        for path in asked:
            mine, theirs = await a.get(path), await b.get(path)
            assert (mine.status_code, mine.json()) == (theirs.status_code, theirs.json()), path
            assert mine.headers["content-type"] == theirs.headers["content-type"], path
        page = (await a.get(f"/v1/users/{star}/followers?not_followed_back=true")).json()
        assert [item["user_id"] for item in page["items"]] == [fans[2], fans[1]]
        # Follows and unfollows (no body) take the lane too: the same writes, each app for a
        # follower of its own, answer alike (up to the follower's id in error messages).
        mine_user, their_user = uid("mine"), uid("theirs")
        writes = [
            ("PUT", "/v1/users/{u}/following/" + star),
            ("PUT", "/v1/users/{u}/following/" + star),
            ("PUT", "/v1/users/{u}/following/{u}"),
            ("PUT", "/v1/users/not%20valid/following/{u}"),
            ("PUT", "/v1/users/{u}/following/" + star + "?extra=1"),
            ("DELETE", "/v1/users/{u}/following/" + star),
            ("DELETE", "/v1/users/{u}/following/" + star),
        ]
        for method, template in writes:
            mine = await a.request(method, template.format(u=mine_user))
            theirs = await b.request(method, template.format(u=their_user))
            assert mine.status_code == theirs.status_code, template
            assert mine.text.replace(mine_user, their_user) == theirs.text, template
            assert mine.headers["content-type"] == theirs.headers["content-type"], template
        assert (await a.get(f"/v1/users/{star}/counts")).json()["followers"] == 3


@pytest.mark.parametrize("key", [None, "gs_not-a-key"])
async def test_the_lane_is_behind_the_guard(
    make_client: Callable[..., httpx.AsyncClient], key: str | None, uid: UserIds
) -> None:
    async with make_client(key=key) as client:
        response = await client.get(f"/v1/users/{uid('x')}/followers?limit=1")
    assert response.status_code == 401
