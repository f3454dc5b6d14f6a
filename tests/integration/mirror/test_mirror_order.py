"""Mirror writes that reach Redis late or out of order never leave an older state behind.

Each change comes from a real Neo4j transaction; only its delivery to Redis is reordered, as
it is when two API workers race.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from graphsvc.bootstrap import Services
from graphsvc.domain.edge_writes import WriteKind
from graphsvc.domain.model import EdgeChange, Side
from tests.support.run import assert_consistent
from tests.support.stores import commit_only

UserIds = Callable[[str], str]


async def committed_changes(backends: Services, src: str, dst: str, ops: str) -> list[EdgeChange]:
    """A follow (+) or unfollow (-) committed in Neo4j for each op, none of them mirrored."""
    changes = []
    for op in ops:
        kind = WriteKind.FOLLOW if op == "+" else WriteKind.UNFOLLOW
        change = await commit_only(backends, kind, src, dst)
        assert isinstance(change, EdgeChange)
        changes.append(change)
    return changes


async def test_any_delivery_order_converges(
    service: Services, backends: Services, uid: UserIds
) -> None:
    rng = random.Random(5)
    for trial in range(12):
        a, b, c = uid("a"), uid("b"), uid("c")
        await committed_changes(backends, c, b, "+")  # b has another follower: a list not empty
        if trial % 2:  # warm lists take changes directly; cold ones journal them
            await service.core.mirror_sync.rebuild([a, b])
        changes = await committed_changes(backends, a, b, "+-+-+-+" if trial % 3 else "+-+-+-")
        rng.shuffle(changes)
        for change in changes:
            await backends.core.redis.mirror.apply_many([change])
        await service.core.mirror_sync.rebuild([a, b])
        await assert_consistent(backends, {a, b, c})


async def test_numbered_count_changes_apply_once_each_in_any_order(
    service: Services, backends: Services, uid: UserIds
) -> None:
    """No reading repairs the counts here: each change is delivered, some twice, shuffled;
    a change that comes before the one numbered ahead of it waits for it."""
    rng = random.Random(9)
    users = [uid(name) for name in "abcd"]
    await service.relations.follow(users[0], users[1])
    await service.relations.follow(users[2], users[3])
    await service.core.mirror_sync.rebuild(users)
    changes: list[EdgeChange] = []
    for _ in range(30):
        src, dst = rng.sample(users, 2)
        changes += await committed_changes(backends, src, dst, rng.choice("+-"))
    deliveries = changes + rng.sample(changes, 10)
    rng.shuffle(deliveries)
    waited: set[str] = set()
    for change in deliveries:
        waited |= await backends.core.redis.mirror.apply_many([change])
    assert waited  # some came early
    truth = await backends.core.neo4j.snapshots.snapshots(users)
    for user in users:
        assert await backends.core.redis.mirror_reads.counts(user) == truth[user].totals
    await assert_consistent(backends, set(users))


async def test_the_next_write_closes_the_gap_a_lost_change_left(
    service: Services, backends: Services, uid: UserIds
) -> None:
    a, b, c, d = uid("a"), uid("b"), uid("c"), uid("d")
    await service.relations.follow(a, b)
    await service.follow_pages.counts(b)
    await committed_changes(backends, c, b, "+")  # its mirror write never happened
    assert (await backends.core.redis.mirror_reads.counts(b)).followers == 1
    await service.relations.follow(d, b)  # numbered after the lost one: b's counts wait
    assert (await backends.core.redis.mirror_reads.counts(b)).followers == 3  # read anew
    await assert_consistent(backends, {a, b, c, d})


async def test_a_stale_snapshot_installed_after_newer_writes(
    service: Services, backends: Services, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await service.relations.follow(a, b)
    await backends.core.redis.mirror_builds.drop([a, b])
    old = await backends.core.neo4j.snapshots.snapshots(
        [b], followers_limit=100
    )  # taken before the writes
    for change in await committed_changes(backends, a, b, "-") + await committed_changes(
        backends, c, b, "+"
    ):
        await backends.core.redis.mirror.apply_many([change])
    await backends.core.redis.mirror_builds.install(old.values(), [Side.FOLLOWERS])  # lands last
    page = await service.follow_pages.followers(b)
    assert [e.user_id for e in page.items] == [c]
    await assert_consistent(backends, {a, b, c})


async def test_a_retried_follow_repairs_a_lost_mirror_write(
    service: Services, backends: Services, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await service.relations.follow(c, a)
    await service.relations.follow(c, b)
    await service.core.mirror_sync.rebuild([a, b])
    await committed_changes(backends, a, b, "+")  # its mirror write never happened
    assert (await backends.core.redis.mirror_reads.counts(b)).followers == 1  # only c, as mirrored
    assert (await service.relations.follow(a, b)).created is False  # the client retries
    assert (await service.follow_pages.counts(b)).followers == 2
    assert [e.user_id for e in (await service.follow_pages.followers(b)).items] == [a, c]
    await assert_consistent(backends, {a, b, c})


async def test_a_write_delayed_across_a_flush_stays_dead(
    service: Services, backends: Services, uid: UserIds
) -> None:
    """follow then unfollow commit; the follow's mirror write arrives after Redis lost everything."""
    for rebuild_first in (False, True):
        a, b, c = uid("a"), uid("b"), uid("c")
        await service.relations.follow(c, b)
        late = (await committed_changes(backends, a, b, "+"))[0]
        await backends.core.redis.mirror.apply_many(await committed_changes(backends, a, b, "-"))
        await backends.core.redis.client.delete(
            *backends.core.redis.mirror.keys(a), *backends.core.redis.mirror.keys(b)
        )
        if rebuild_first:  # the late write meets a freshly built list
            await service.follow_pages.followers(b)
            await service.follow_pages.following(a)
        await backends.core.redis.mirror.apply_many([late])
        assert [e.user_id for e in (await service.follow_pages.followers(b)).items] == [c]
        assert [e.user_id for e in (await service.follow_pages.following(a)).items] == []
        assert (await service.follow_pages.counts(b)).followers == 1
        await assert_consistent(backends, {a, b, c})


async def test_a_write_between_a_cold_read_and_its_install_is_counted(
    service: Services, backends: Services, uid: UserIds
) -> None:
    """A reader snapshots a cold user, a write lands, then the older snapshot is installed."""
    a, b, c = uid("a"), uid("b"), uid("c")
    await service.relations.follow(c, b)
    await backends.core.redis.mirror_builds.drop([a, b])
    old = await backends.core.neo4j.snapshots.snapshots([b])  # counts only, before the write
    for change in await committed_changes(backends, a, b, "+"):
        await backends.core.redis.mirror.apply_many([change])  # b is cold: its counts are parked
    assert await backends.core.redis.mirror_reads.counts(b) is None
    await backends.core.redis.mirror_builds.install(old.values(), sides=())
    assert (await backends.core.redis.mirror_reads.counts(b)).followers == 2
    await assert_consistent(backends, {a, b, c})
