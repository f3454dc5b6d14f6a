"""The mirror may be empty or partly lost at any time; answers stay exact."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from graphsvc.bootstrap import Services
from tests.support.driver import Driver, full_counts, user_ids, walk

UserIds = Callable[[str], str]


async def build_graph(service: Services, uid: UserIds) -> tuple[str, list[str], str, list[str]]:
    star, fans = uid("star"), [uid(f"fan{n}") for n in range(40)]
    reader, follows = uid("reader"), [uid(f"t{n}") for n in range(30)]
    for fan in fans:
        await service.relations.follow(fan, star)
    for target in follows:
        await service.relations.follow(reader, target)
    return star, fans, reader, follows


async def assert_exact(
    driver: Driver, star: str, fans: list[str], reader: str, follows: list[str]
) -> None:
    assert user_ids(await walk(driver.followers(star, page_size=6), 6)) == fans[::-1]
    assert user_ids(await walk(driver.following(reader, page_size=6), 6)) == follows[::-1]
    assert await driver.counts(star) == full_counts(40, 0)
    assert await driver.counts(reader) == full_counts(0, 30)


async def test_lists_and_counts_survive_flushall(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    graph = await build_graph(service, uid)
    await assert_exact(driver, *graph)  # warm
    await backends.core.redis.client.flushall()
    assert await backends.core.redis.client.exists(*backends.core.redis.mirror.keys(graph[0])) == 0
    await assert_exact(driver, *graph)  # rebuilt on read
    assert (
        await backends.core.redis.client.exists(backends.core.redis.mirror.keys(graph[0])[1]) == 1
    )


async def test_a_lost_list_key_is_rebuilt_not_served_empty(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    graph = await build_graph(service, uid)
    await assert_exact(driver, *graph)
    star, reader = graph[0], graph[2]
    await backends.core.redis.client.delete(
        backends.core.redis.mirror.keys(star)[1], backends.core.redis.mirror.keys(reader)[2]
    )
    await assert_exact(driver, *graph)


async def test_writes_to_cold_users_are_kept_until_the_list_is_built(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    star, fans, _reader, _follows = await build_graph(service, uid)
    await backends.core.redis.client.flushall()
    late = [uid(f"late{n}") for n in range(5)]
    for fan in late:
        await service.relations.follow(fan, star)
    await service.relations.unfollow(fans[0], star)
    assert await driver.counts(star) == full_counts(44, 0)
    expected = late[::-1] + fans[:0:-1]
    assert user_ids(await walk(driver.followers(star, page_size=8), 8)) == expected


async def test_reads_racing_writes_on_a_cold_user(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    """Rebuilds from older snapshots may land after newer writes: the journal replays them."""
    star = uid("star")
    fans = [uid(f"fan{n}") for n in range(60)]
    for round_ in range(3):
        await backends.core.redis.mirror_builds.drop([star])
        batch = fans[round_ * 20 : (round_ + 1) * 20]
        reads = [anext(driver.followers(star, page_size=5).pages()) for _ in range(10)]
        await asyncio.gather(*(service.relations.follow(f, star) for f in batch), *reads)
    assert set(user_ids(await walk(driver.followers(star, page_size=50), 50))) == set(fans)
    assert (await driver.counts(star)).followers == 60
