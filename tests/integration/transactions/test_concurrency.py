"""Concurrent writes through the API leave Redis equal to Neo4j."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from graphsvc.bootstrap import Services
from tests.support.driver import Driver
from tests.support.run import assert_consistent

UserIds = Callable[[str], str]


async def test_200_concurrent_follows_of_one_target(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    target = uid("target")
    fans = [uid(f"fan{n}") for n in range(200)]
    await driver.ids(target, "followers")  # a warm list takes the writes directly
    answers = await asyncio.gather(*(driver.follow(f, target) for f in fans))
    assert all(answer.created for answer in answers)
    assert (await driver.counts(target)).followers == 200
    truth = (await backends.core.neo4j.snapshots.snapshots([target]))[target]
    assert truth.totals.followers == 200
    assert set(await driver.ids(target, "followers")) == set(fans)
    await assert_consistent(backends, {target, *fans})


async def _toggle_storm(drivers: list[Driver], a: str, b: str, seed: int) -> None:
    """100 follows and unfollows of one pair at once, spread over independent services (as
    over worker processes), so they race in Neo4j and reach Redis in any order; each is
    answered (an error answer raises)."""
    rng = random.Random(seed)
    calls: list[Awaitable[object]] = []
    for n in range(100):
        driver = drivers[n % len(drivers)]
        calls.append(driver.follow(a, b) if rng.random() < 0.5 else driver.unfollow(a, b))
    await asyncio.gather(*calls)


async def test_100_concurrent_toggles_of_one_pair(
    driver: Driver,
    make_driver: Callable[..., Driver],
    backends: Services,
    uid: UserIds,
) -> None:
    async with make_driver() as other, make_driver() as third:
        for seed in range(3):
            a, b = uid("a"), uid("b")
            await driver.ids(b, "followers")
            await driver.ids(a, "following")
            await _toggle_storm([driver, other, third], a, b, seed)
            truth = (await backends.core.neo4j.snapshots.snapshots([a]))[a].totals.following
            assert (await driver.counts(a)).following == truth
            followers = await driver.ids(b, "followers")
            assert followers == ([a] if truth else [])
            await assert_consistent(backends, {a, b})


async def test_toggles_racing_cold_rebuilds(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await backends.core.redis.mirror_builds.drop([a, b])
    reads = [driver.ids(b, "followers"), driver.ids(a, "following")] * 20
    await asyncio.gather(_toggle_storm([driver], a, b, seed=11), *reads)
    await assert_consistent(backends, {a, b})


async def test_mutual_follows_at_once_do_not_deadlock(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    pairs = [(uid("x"), uid("y")) for _ in range(40)]
    calls = [driver.follow(x, y) for x, y in pairs]
    calls += [driver.follow(y, x) for x, y in pairs]
    answers = await asyncio.gather(*calls)
    assert all(answer.created for answer in answers)
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
    answers = await asyncio.gather(*calls)
    assert sum(answer.created for answer in answers) == 30
    truth = (await backends.core.neo4j.snapshots.snapshots([newbie], following_limit=100))[newbie]
    assert truth.totals.following == 30
    assert sorted(e.user_id for e in truth.following) == sorted(targets)
    await assert_consistent(backends, {newbie, *targets})
