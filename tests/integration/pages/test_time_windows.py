"""Followers and following read within a window of follow times (``since_after`` /
``since_before``) against the real servers: exactly the follows inside it, newest first,
across pages and across the seam between the mirror's hot list and Neo4j."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from tests.support.driver import Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


@pytest.mark.parametrize("cap", [3, 1000])  # past the hot list, and inside it
async def test_a_window_lists_exactly_the_follows_inside_it(
    make_driver: MakeDriver, uid: UserIds, cap: int
) -> None:
    owner = uid("owner")
    fans = [uid(f"fan{n}") for n in range(9)]
    async with make_driver(hot_list_cap=cap) as graph:
        for fan in fans:
            await graph.follow(fan, owner)
            await graph.follow(owner, fan)
        for side in ("followers", "following"):
            walk = graph.followers if side == "followers" else graph.following
            everything = [item async for item in walk(owner)]
            times = [item.since for item in everything]  # newest first
            after, before = times[6], times[1]  # strictly between: times[2..5]
            inside = [
                item.user_id
                async for item in walk(owner, since_after=after, since_before=before, page_size=2)
            ]
            assert inside == [item.user_id for item in everything[2:6]], side
            newer = [item.user_id async for item in walk(owner, since_after=times[3])]
            assert newer == [item.user_id for item in everything[:3]], side
            older = [item.user_id async for item in walk(owner, since_before=times[3])]
            assert older == [item.user_id for item in everything[4:]], side


async def test_a_window_that_ends_before_it_starts_is_refused(driver: Driver, uid: UserIds) -> None:
    owner = uid("owner")
    later, earlier = datetime(2026, 5, 1), datetime(2026, 4, 1)
    listing = driver.followers(owner, since_after=later, since_before=earlier)
    await refused(anext(aiter(listing)), 400, "invalid_time_range")
    bad = await driver.http.get(f"/v1/users/{owner}/following", params={"since_after": "x"})
    assert bad.status_code == 422 and "since_after" in bad.text
