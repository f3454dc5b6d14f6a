"""A request spends its route's cost of the key's budget: one request for what the mirror
answers, more for what makes Neo4j work (common lists, suggestions, friends, familiar
followers, relationships), and the rest of its route's graph cost for a page that ran past the
hot list. Read off the budget's headers (RateLimit-Remaining), request by request."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from graphsvc.api.http.access import Cost
from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from tests.support.driver import Driver

UserIds = Callable[[str], str]
BUDGET = {"rate_limits_enabled": True, "rate_limit_reads": "1000000 per 1 day"}


async def read_key(backends: Services, name: str) -> str:
    """A read key of its own: a budget no other test spends."""
    return (await backends.access.create(frozenset({Scope.READ}), name=name)).token


async def spent(client: httpx.AsyncClient, path: str, **params: object) -> int:
    """What one GET spent of the key's read budget (the remaining before, less after)."""
    before = await client.get("/v1/users/nobody.costs/counts")
    assert before.status_code == 200, before.text
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    remaining = int(response.headers["ratelimit-remaining"])
    return int(before.headers["ratelimit-remaining"]) - remaining


async def test_an_expensive_route_spends_more_of_the_budget_than_a_cheap_one(
    make_client: Callable[..., httpx.AsyncClient],
    make_driver: Callable[..., Driver],
    backends: Services,
    uid: UserIds,
) -> None:
    a, b, fan = uid("a"), uid("b"), uid("fan")
    async with make_driver() as writer:
        await writer.follow_pairs((fan, a), (fan, b), (a, b))
    key = await read_key(backends, "costs")
    async with make_client(key=key, **BUDGET) as client:
        cheap = await spent(client, f"/v1/users/{a}/followers")
        assert cheap == Cost.MIRROR == 1
        assert await spent(client, f"/v1/users/{a}/counts") == Cost.MIRROR
        assert await spent(client, f"/v1/users/{a}/common-followers/{b}") == Cost.COMMON
        assert await spent(client, f"/v1/users/{a}/common-following/{fan}") == Cost.COMMON
        assert await spent(client, f"/v1/users/{a}/suggestions") == Cost.SUGGESTIONS
        assert await spent(client, f"/v1/users/{a}/friends") == Cost.FOLLOWINGS
        path = f"/v1/users/{fan}/familiar-followers/{b}"
        assert await spent(client, path) == Cost.FOLLOWINGS
        path = f"/v1/users/{a}/relationships"
        assert await spent(client, path, ids=f"{b},{fan}") == Cost.GRAPH
        assert Cost.COMMON > Cost.GRAPH > cheap
        # the cost is in the OpenAPI document, beside the scope
        operations = (await client.get("/openapi.json")).json()["paths"]
        common = operations["/v1/users/{user_id}/common-followers/{other_id}"]["get"]
        assert common["x-budget-cost"] == Cost.COMMON
        followers = operations["/v1/users/{user_id}/followers"]["get"]
        assert followers["x-budget-cost"] == Cost.MIRROR
        assert followers["x-budget-cost-from-neo4j"] == Cost.GRAPH


async def test_a_page_past_the_hot_list_costs_what_a_neo4j_read_does(
    make_client: Callable[..., httpx.AsyncClient],
    make_driver: Callable[..., Driver],
    backends: Services,
    uid: UserIds,
) -> None:
    """The hot list holds the newest 10 followers: a page within it costs one request, one
    that Neo4j serves (past it, at any depth) five, and a not-followed-back page (which asks
    Neo4j who is followed back) five too."""
    star = uid("star")
    fans = [uid(f"fan{n}") for n in range(30)]
    settings = {"hot_list_cap": 10, **BUDGET}
    async with make_driver(hot_list_cap=10) as writer:
        for fan in fans:
            await writer.follows(fan, star)
    key = await read_key(backends, "deep pages")
    async with make_client(key=key, **settings) as client:
        path = f"/v1/users/{star}/followers"
        first = await client.get(path, params={"limit": 5})
        assert [i["user_id"] for i in first.json()["items"]] == fans[::-1][:5]
        assert await spent(client, path, limit=5) == Cost.MIRROR
        cursor = first.json()["next_cursor"]
        second = await client.get(path, params={"limit": 5, "cursor": cursor})
        cursor = second.json()["next_cursor"]  # after the 10th: the hot list is behind
        assert await spent(client, path, limit=5, cursor=cursor) == Cost.GRAPH
        deeper = await client.get(path, params={"limit": 5, "cursor": cursor})
        assert [i["user_id"] for i in deeper.json()["items"]] == fans[::-1][10:15]
        cursor = deeper.json()["next_cursor"]
        assert await spent(client, path, limit=5, cursor=cursor) == Cost.GRAPH
        assert await spent(client, path, limit=5, not_followed_back="true") == Cost.GRAPH
