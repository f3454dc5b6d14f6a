"""Growth and churn series against the real servers: through a run of follows, unfollows,
removals and blocks, the total at every bucket's end is the count the counts route gave at
that moment, and gains and losses are the changes of each bucket; the closed buckets come from
the cache afterwards; hidden counts hide the series; the bounds are named."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


async def test_every_bucket_ends_at_the_count_of_that_moment(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    owner = uid("owner")
    fans = [uid(f"fan{n}") for n in range(8)]
    rng = random.Random(7)
    # (wall time before the write, after it and its count read): a bucket end between one
    # write's "after" and the next one's "before" saw exactly the count read in between
    moments: list[tuple[float, float, int]] = []
    async with make_driver(changes_settle_seconds=0) as graph:
        began = time.time()
        while time.time() - began < 3.5:
            fan = rng.choice(fans)
            if time.time() % 1 > 0.8:  # let the bucket end pass between two writes
                await asyncio.sleep(1.02 - time.time() % 1)
            before = time.time()
            match rng.randrange(4):
                case 0 | 1:
                    await graph.follow(fan, owner)
                case 2:
                    await graph.unfollow(fan, owner)
                case _:
                    await graph.remove_follower(owner, fan)
            counts = await graph.counts(owner)
            moments.append((before, time.time(), counts.followers or 0))
            await asyncio.sleep(0.01)
        await graph.block(owner, fans[0])
        final = (await graph.counts(owner)).followers
        start = datetime.fromtimestamp(began, UTC)
        series = await graph.series(owner, bucket="second", start=start)
        again = await graph.series(owner, bucket="second", start=start)  # from the cache
        changes = [c async for c in graph.changes_since(owner, since=start)]

    # a second may have ended between the two reads: the later one then has one more bucket,
    # empty, and the same buckets before it
    shared = len(series.items)
    assert again.bucket == series.bucket and again.items[:shared] == series.items
    assert all((b.gained, b.lost, b.total) == (0, 0, final) for b in again.items[shared:])
    assert len(again.items) - shared <= 1
    assert series.items[-1].total == final
    checked = 0
    for bucket in series.items[:-1]:
        end = bucket.start.timestamp() + 1
        seen = [
            count
            for (_, after, count), (before, _, _) in itertools.pairwise(moments)
            if after <= end <= before
        ]
        if seen:
            assert bucket.total == seen[0], bucket
            checked += 1
    assert checked >= 3
    for bucket in series.items:
        inside = [c for c in changes if bucket.start <= c.at < bucket.start + timedelta(seconds=1)]
        assert bucket.gained == sum(c.op == "follow" for c in inside)
        assert bucket.lost == sum(c.op == "unfollow" for c in inside)


async def test_the_following_series_and_a_day_of_hours(driver: Driver, uid: UserIds) -> None:
    owner, others = uid("owner"), [uid(f"other{n}") for n in range(3)]
    for other in others:
        await driver.follow(owner, other)
    await driver.unfollow(owner, others[0])
    hours = await driver.series(owner, "following", start=datetime.now(UTC) - timedelta(hours=23))
    assert len(hours.items) == 24 and hours.bucket == "hour"
    assert [(b.gained, b.lost, b.total) for b in hours.items[-1:]] == [(3, 1, 2)]
    assert {b.total for b in hours.items[:-1]} <= {0}
    frame = await driver.series_frame(owner, "following", bucket="day")
    assert list(frame.columns) == ["gained", "lost", "total"] and frame["total"].iloc[-1] == 2


async def test_hidden_counts_hide_the_series_and_bounds_are_named(
    driver: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    owner = uid("owner")
    await driver.set_privacy(owner, counts_visibility="private")
    async with as_viewer(uid("stranger")) as graph:
        await refused(graph.series(owner), 403, "network_hidden")
    assert (await driver.series(owner, bucket="day")).items[-1].total == 0
    long_ago = datetime.now(UTC) - timedelta(days=91)
    await refused(driver.series(owner, bucket="day", start=long_ago), 400, "since_too_old")
    a_day_ago = datetime.now(UTC) - timedelta(days=1)
    await refused(driver.series(owner, bucket="minute", start=a_day_ago), 400, "invalid_time_range")
    later = datetime.now(UTC) - timedelta(hours=1)
    await refused(
        driver.series(owner, start=later, end=later - timedelta(hours=2)), 400, "invalid_time_range"
    )
    bad = await driver.http.get(f"/v1/users/{owner}/followers/series", params={"bucket": "week"})
    assert bad.status_code == 422 and "bucket" in bad.text
