"""Hot lists are capped, counts stay exact, and walks cross the Redis/Neo4j seam unnoticed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load_edges
from tests.support.driver import Driver, assert_newest_first, user_ids, walk

UserIds = Callable[[str], str]
CAP = 25


async def followers_of(driver: Driver, user: str, page_size: int = 7) -> list[str]:
    """Every follower, walked in small pages (so the walk crosses the Redis/Neo4j seam)."""
    return user_ids(await walk(driver.followers(user, page_size=page_size), page_size))


async def test_celebrity_past_the_cap(
    make_driver: Callable[..., Driver],
    make_service: Callable[..., Services],
    backends: Services,
    uid: UserIds,
) -> None:
    service = make_service(hot_list_cap=CAP)
    celeb = uid("celeb")
    fans = [uid(f"fan{n}") for n in range(90)]
    for fan in fans:
        await service.relations.follow(fan, celeb)
    redis, followers_key = backends.core.redis.client, backends.core.redis.mirror.keys(celeb)[1]

    async with make_driver(hot_list_cap=CAP) as driver:
        assert (await driver.counts(celeb)).followers == 90
        # Lists are built on first read, holding only the newest CAP entries.
        assert await redis.zcard(followers_key) == 0
        items = await walk(driver.followers(celeb, page_size=7), 7)
        assert user_ids(items) == fans[::-1]
        assert_newest_first(items)
        assert await redis.zcard(followers_key) == CAP

        # Unfollows on both sides of the seam, then new follows.
        gone = fans[-3:] + fans[:3]
        await asyncio.gather(*(service.relations.unfollow(f, celeb) for f in gone))
        newcomers = [uid(f"new{n}") for n in range(5)]
        for fan in newcomers:
            await service.relations.follow(fan, celeb)
        expected = newcomers[::-1] + [f for f in fans[::-1] if f not in gone]
        assert await followers_of(driver, celeb) == expected
        assert (await driver.counts(celeb)).followers == 89
        assert await redis.zcard(followers_key) <= CAP

        # A cold rebuild of a celebrity keeps only the newest CAP entries, and walks stay whole.
        await backends.core.redis.mirror_builds.drop([celeb])
        assert await followers_of(driver, celeb) == expected
        assert await redis.zcard(followers_key) == CAP


async def test_equal_follow_times_across_the_seam(
    make_driver: Callable[..., Driver],
    make_service: Callable[..., Services],
    tmp_path: Path,
    remember: Callable[[list[str]], None],
    uid: UserIds,
) -> None:
    """Bulk loads can give many followers one timestamp: ties order by id, across the seam."""
    prefix = uid("ties") + "."
    path = tmp_path / "ties.txt"
    path.write_text("".join(f"f{n:03d} star 1700000000\n" for n in range(40)))
    service = make_service(hot_list_cap=10)
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    await load_edges(service, edges, progress=False)
    async with make_driver(hot_list_cap=10) as driver:
        for limit in (3, 7, 10, 11):
            got = await followers_of(driver, prefix + "star", limit)
            assert got == [f"{prefix}f{n:03d}" for n in reversed(range(40))], limit


async def test_following_list_is_capped_too(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    service = make_service(hot_list_cap=5)
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(12)]
    for target in targets:
        await service.relations.follow(user, target)
    page = await service.follow_pages.following(user, limit=200)
    assert [e.user_id for e in page.items] == targets[::-1]
    assert await backends.core.redis.client.zcard(backends.core.redis.mirror.keys(user)[2]) == 5
    snapshot = (await backends.core.neo4j.snapshots.snapshots([user]))[user]
    assert snapshot.totals.following == 12
