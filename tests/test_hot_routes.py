"""The routes served by hand (``api/hot_routes.py``) answer exactly as their FastAPI
declarations, which document them: the same app is asked the same questions with and without
them, over the real servers."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from driver import Driver
from helpers import app_client, without_hot_routes

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.domain.access import ALL_SCOPES

UserIds = Callable[[str], str]


async def test_the_hand_written_routes_and_fastapi_answer_alike(
    make_service: Callable[..., Services], service_key: str, uid: UserIds
) -> None:
    service = make_service(rate_limits_enabled=False)
    fast, plain = create_app(service.settings, service), create_app(service.settings, service)
    assert without_hot_routes(plain) == 5  # followers, following, counts, follow, unfollow
    star, fans = uid("star"), [uid(f"fan{n}") for n in range(3)]

    async with app_client(fast, service_key) as a, app_client(plain, service_key) as b:
        graph = Driver(a)
        await graph.follow_pairs(*((fan, star) for fan in fans), (star, fans[0]))
        first = await anext(graph.followers(star, page_size=1).pages())
        asked = [
            f"/v1/users/{star}/followers",
            f"/v1/users/{star}/followers?limit=2",
            f"/v1/users/{star}/followers?limit=02",
            f"/v1/users/{star}/followers?limit=0",
            f"/v1/users/{star}/followers?limit=abc",
            f"/v1/users/{star}/followers?limit=",
            f"/v1/users/{star}/followers?limit=-1",
            f"/v1/users/{star}/followers?limit=1&limit=2",
            f"/v1/users/{star}/followers?limit=1&cursor={first.next_cursor}",
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
        assert await graph.ids(star, "followers", not_followed_back=True) == [fans[2], fans[1]]
        # Follows and unfollows: the same writes, each app for a follower of its own, answer
        # alike (up to the follower's id in error messages).
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
        assert (await graph.counts(star)).followers == 3


@pytest.mark.parametrize("key", [None, "gs_not-a-key"])
async def test_the_hand_written_routes_check_the_key_first(
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
        ):
            response = await client.request(method, path)
            assert response.status_code == 401, (method, path, response.text)
            assert response.json()["error"]["code"] == "unauthenticated"


async def test_the_hand_written_routes_spend_and_show_the_budget(
    make_client: Callable[..., httpx.AsyncClient], backends: Services, uid: UserIds
) -> None:
    user = uid("x")
    key = (await backends.access.create(ALL_SCOPES, name="budget of hot routes")).token
    limited = {"rate_limits_enabled": True, "rate_limit_reads": "2 per 60 seconds"}
    async with make_client(key=key, **limited) as client:
        first = await client.get(f"/v1/users/{user}/counts")
        assert first.status_code == 200
        assert first.headers["ratelimit-limit"] == "2"
        assert first.headers["ratelimit-remaining"] == "1"
        await client.get(f"/v1/users/{user}/followers")
        refused = await client.get(f"/v1/users/{user}/following")
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"]
