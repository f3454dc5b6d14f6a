"""Keyset paging: order, exactly-once walks, limits and cursors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from graphsvc.bootstrap import Services
from tests.support.driver import Driver, assert_newest_first, user_ids, walk

UserIds = Callable[[str], str]


async def test_250_followers_walked_by_7_each_exactly_once(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    target = uid("target")
    followers = [uid(f"f{n}") for n in range(250)]
    for follower in followers:  # one at a time, so the follow order is known
        await service.relations.follow(follower, target)
    items = await walk(driver.followers(target, page_size=7), 7)
    assert user_ids(items) == followers[::-1]
    assert_newest_first(items)
    assert (await driver.counts(target)).followers == 250


async def test_following_list_pages_the_same_way(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(31)]
    for target in targets:
        await service.relations.follow(user, target)
    items = await walk(driver.following(user, page_size=4), 4)
    assert user_ids(items) == targets[::-1]


async def test_walk_while_follows_arrive_yields_each_once(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    target = uid("target")
    before = [uid(f"old{n}") for n in range(60)]
    await asyncio.gather(*(service.relations.follow(f, target) for f in before))
    seen: list[str] = []
    newcomers = 0
    async for page in driver.followers(target, page_size=9).pages():
        seen += user_ids(page.items)
        # Others keep following while the client walks.
        await asyncio.gather(
            *(service.relations.follow(uid(f"new{newcomers + k}"), target) for k in range(4))
        )
        newcomers += 4
    assert len(seen) == len(set(seen)), "an edge was served twice"
    assert set(before) <= set(seen), "an edge was skipped"
    assert (await driver.counts(target)).followers == 60 + newcomers


@pytest.mark.parametrize("limit", ["0", "201", "-3", "x", "1.5"])
async def test_bad_limits_are_422(client: httpx.AsyncClient, uid: UserIds, limit: str) -> None:
    response = await client.get(f"/v1/users/{uid('u')}/followers", params={"limit": limit})
    assert response.status_code == 422
    assert "limit" in response.json()["error"]["message"]


async def test_limit_bounds_are_accepted(client: httpx.AsyncClient, uid: UserIds) -> None:
    for limit in (1, 200):
        response = await client.get(f"/v1/users/{uid('u')}/following", params={"limit": limit})
        assert response.status_code == 200


async def test_bad_cursors_are_400_naming_the_problem(
    client: httpx.AsyncClient, driver: Driver, service: Services, uid: UserIds
) -> None:
    target, other = uid("target"), uid("other")
    for n in range(3):
        await service.relations.follow(uid(f"f{n}"), target)
    cursor = (await anext(driver.followers(target, page_size=1).pages())).next_cursor
    assert cursor
    body, mac = cursor.split(".")
    tampered = ("B" if body[0] != "B" else "C") + body[1:]
    cases = {
        f"{tampered}.{mac}": "signature",
        "not-a-cursor": "malformed",
        "%%%.%%%": "malformed",
        cursor[:-3]: "malformed",
        cursor[:-4]: "malformed",
        f"{body}.{mac[::-1]}": "signature",
    }
    for bad, problem in cases.items():
        response = await client.get(f"/v1/users/{target}/followers", params={"cursor": bad})
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"] == "invalid_cursor"
        assert problem in response.json()["error"]["message"]
    for path in (f"/v1/users/{target}/following", f"/v1/users/{other}/followers"):
        response = await client.get(path, params={"cursor": cursor})
        assert response.status_code == 400
        assert "different list" in response.json()["error"]["message"]
