"""The reconciler on the real servers: drift is found, repaired and reported; recently
written users are tracked for `graphsvc reconcile --every`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import Privacy, Visibility
from graphsvc.ops.repair.reconcile import reconcile, reconcile_recent, reconcile_rounds
from tests.support.driver import Driver, eventually
from tests.support.stores import mirrored

UserIds = Callable[[str], str]


async def batches(*users: str) -> AsyncIterator[list[str]]:
    yield list(users)


async def test_drift_is_found_repaired_and_reported(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    a, b, c, d, clean = (uid(n) for n in ("a", "b", "c", "d", "clean"))
    await driver.follow_pairs((a, b), (c, b), (d, clean), (clean, a))
    for user in (a, b, c, d, clean):  # warm
        await driver.ids(user, "followers")
        await driver.ids(user, "following")
    redis = backends.core.redis.client
    await redis.hset(backends.core.redis.mirror.keys(a)[0], "fg", 7)  # a wrong count
    await redis.zrem(backends.core.redis.mirror.keys(b)[1], c)  # a lost list entry
    await backends.core.redis.statuses.set_status(
        d, True, 2**62
    )  # an active user hidden as inactive
    before = await backends.consistency.check([a, b, c, d, clean])
    assert {drift.user_id for drift in before} == {a, b, d}

    report = await reconcile(service.consistency, batches(a, b, c, d, clean), progress=False)
    assert (report.checked, report.found, report.repaired, report.left) == (5, 3, 3, 0)
    assert await backends.consistency.check([a, b, c, d, clean]) == []
    assert (await driver.counts(a)).following == 1
    assert set(await driver.ids(b, "followers")) == {a, c}
    assert await driver.ids(clean, "followers") == [d]


async def test_drifted_privacy_settings_are_found_and_repaired_from_neo4j(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    hidden, public = uid("hidden"), uid("public")
    await driver.set_privacy(hidden, followers_visibility="private", locked=True)
    await driver.set_privacy(public, discoverable=False)
    await driver.set_privacy(public, discoverable=True)
    mirror = backends.core.redis.privacy
    await backends.privacy.load()  # built (a hash not built yet is no drift: it is built first)
    # a lost write (the user reads as public) and a stale newer one (a public user hidden)
    await mirror.set(hidden, Privacy(), 2**62, force=True)
    await mirror.set(public, Privacy(following_visibility=Visibility.PRIVATE), 2**62)
    drifts = await backends.consistency.check([hidden, public])
    assert {(d.user_id, d.what) for d in drifts} == {(hidden, "privacy"), (public, "privacy")}
    report = await reconcile(service.consistency, batches(hidden, public), progress=False)
    assert (report.found, report.left) == (2, 0)
    assert (await mirror.of([hidden]))[hidden] == Privacy(
        followers_visibility=Visibility.PRIVATE, locked=True
    )
    assert (await mirror.of([public]))[public] == Privacy()


async def test_recently_written_users_are_reconciled_every_round(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await driver.follows(a, b)
    assert {a, b} <= set(await backends.core.redis.mirror.written_since(60))
    assert (await driver.counts(b)).followers == 1  # loaded
    await backends.core.redis.client.hset(backends.core.redis.mirror.keys(b)[0], "fr", 9)
    assert [d.user_id for d in await backends.consistency.check([b])] == [b]
    lines: list[str] = []
    await reconcile_recent(service.consistency, 30, rounds=1, say=lines.append)
    assert len(lines) == 1 and lines[0].endswith("repaired; 0 left after the repair")
    assert " 0 drifts" not in lines[0]  # b's, at least (other tests' users are recent too)
    assert (await driver.counts(b)).followers == 1


async def test_a_snapshot_read_before_a_drop_is_refused(
    service: Services, backends: Services, uid: Callable[[str], str]
) -> None:
    """A slow cold rebuild must not land after a repair's drop: writes that reached the loaded
    list between its snapshot and the drop would be lost (loaded lists journal only removals)."""
    star, old_fan, new_fan = uid("star"), uid("old"), uid("new")
    await service.relations.follow(old_fan, star)
    await service.follow_pages.followers(star)  # loaded
    stale = await backends.core.neo4j.snapshots.snapshots(
        [star], followers_limit=100, following_limit=100
    )
    await service.relations.follow(new_fan, star)  # reaches the loaded list, after the snapshot
    await backends.core.redis.mirror_builds.drop([star])
    # the slow rebuild lands now
    await backends.core.redis.mirror_builds.install(stale.values(), list(Side))
    assert (await mirrored(backends, star)).lists[Side.FOLLOWERS] is None  # refused
    page = await service.follow_pages.followers(star)
    assert [e.user_id for e in page.items] == [new_fan, old_fan]
    assert (await service.follow_pages.counts(star)).followers == 2


async def test_workers_reconcile_recent_writes_one_round_a_period(
    driver: Driver,
    backends: Services,
    uid: UserIds,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """WORKER_RECONCILE_SECONDS: two workers' rounds, one of them a period, repair drift."""
    a, b = uid("a"), uid("b")
    await driver.follows(a, b)
    await driver.ids(a, "following")
    await backends.core.redis.client.hset(backends.core.redis.mirror.keys(a)[0], "fg", 9)
    assert {drift.user_id for drift in await backends.consistency.check([a, b])} == {a}
    capsys.readouterr()
    loop = asyncio.get_running_loop()
    workers = [loop.create_task(reconcile_rounds(backends.consistency, 2.0)) for _ in range(2)]
    try:

        async def repaired() -> bool:
            return not await backends.consistency.check([a, b])

        await eventually(repaired, seconds=5.0)
        await asyncio.sleep(0.5)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    assert await backends.consistency.check([a, b]) == []
    rounds = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(rounds) == 1, rounds
