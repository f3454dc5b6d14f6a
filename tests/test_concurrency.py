"""Concurrent writes through the API leave Redis equal to Neo4j."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import httpx
from conftest import assert_consistent
from helpers import walk

from graphsvc.bootstrap import Services

UserIds = Callable[[str], str]


async def test_200_concurrent_follows_of_one_target(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    target = uid("target")
    fans = [uid(f"fan{n}") for n in range(200)]
    await client.get(f"/v1/users/{target}/followers")  # a warm list takes the writes directly
    responses = await asyncio.gather(
        *(client.put(f"/v1/users/{f}/following/{target}") for f in fans)
    )
    assert all(r.status_code == 200 and r.json()["created"] for r in responses)
    assert (await client.get(f"/v1/users/{target}/counts")).json()["followers"] == 200
    truth = (await backends.neo4j.snapshots.snapshots([target]))[target]
    assert truth.followers_count == 200
    assert {i["user_id"] for i in await walk(client, target, "followers", 200)} == set(fans)
    await assert_consistent(backends, {target, *fans})


async def _toggle_storm(clients: list[httpx.AsyncClient], a: str, b: str, seed: int) -> None:
    """100 follows and unfollows of one pair at once, spread over independent services (as
    over worker processes), so they race in Neo4j and reach Redis in any order."""
    rng = random.Random(seed)
    calls = []
    for n in range(100):
        client = clients[n % len(clients)]
        path = f"/v1/users/{a}/following/{b}"
        calls.append(client.put(path) if rng.random() < 0.5 else client.delete(path))
    responses = await asyncio.gather(*calls)
    assert all(r.status_code == 200 for r in responses)


async def test_100_concurrent_toggles_of_one_pair(
    client: httpx.AsyncClient,
    make_client: Callable[..., httpx.AsyncClient],
    backends: Services,
    uid: UserIds,
) -> None:
    async with make_client() as other, make_client() as third:
        for seed in range(3):
            a, b = uid("a"), uid("b")
            await client.get(f"/v1/users/{b}/followers")
            await client.get(f"/v1/users/{a}/following")
            await _toggle_storm([client, other, third], a, b, seed)
            truth = (await backends.neo4j.snapshots.snapshots([a]))[a].following_count
            assert (await client.get(f"/v1/users/{a}/counts")).json()["following"] == truth
            followers = [i["user_id"] for i in await walk(client, b, "followers", 10)]
            assert followers == ([a] if truth else [])
            await assert_consistent(backends, {a, b})


async def test_toggles_racing_cold_rebuilds(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await backends.redis.mirror.drop([a, b])
    reads = [
        client.get(f"/v1/users/{u}/{side}") for u, side in [(b, "followers"), (a, "following")] * 20
    ]
    await asyncio.gather(_toggle_storm([client], a, b, seed=11), *reads)
    await assert_consistent(backends, {a, b})


async def test_mutual_follows_at_once_do_not_deadlock(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    pairs = [(uid("x"), uid("y")) for _ in range(40)]
    calls = [client.put(f"/v1/users/{x}/following/{y}") for x, y in pairs]
    calls += [client.put(f"/v1/users/{y}/following/{x}") for x, y in pairs]
    responses = await asyncio.gather(*calls)
    assert all(r.status_code == 200 and r.json()["created"] for r in responses)
    await assert_consistent(backends, {u for pair in pairs for u in pair})


async def test_a_new_user_following_at_once_from_several_services(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    """Each follow is sent twice, by different services, while the follower is being created."""
    services = [make_service() for _ in range(3)]
    newbie = uid("newbie")
    targets = [uid(f"t{n}") for n in range(30)]
    calls = [services[n % 3].relations.follow(newbie, t) for n, t in enumerate(targets)]
    calls += [services[(n + 1) % 3].relations.follow(newbie, t) for n, t in enumerate(targets)]
    created = await asyncio.gather(*calls)
    assert sum(created) == 30
    truth = (await backends.neo4j.snapshots.snapshots([newbie], following_limit=100))[newbie]
    assert truth.following_count == 30
    assert sorted(e.user_id for e in truth.following) == sorted(targets)
    await assert_consistent(backends, {newbie, *targets})
