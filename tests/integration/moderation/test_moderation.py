"""Blocks, user statuses, follow limits and erasure, through the HTTP API on the real servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.client import GraphError
from graphsvc.domain.edge_writes import WriteKind
from graphsvc.domain.model import Side
from graphsvc.wire.schemas import (
    BlockBody,
    EraseBody,
    FollowBody,
    RelationshipsBody,
    StatusBody,
    UnblockBody,
)
from tests.support.driver import Driver, assert_error, full_counts, refused, relationship
from tests.support.helpers import app_client
from tests.support.run import assert_consistent
from tests.support.stores import commit_only

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]

BAD_IDS = ["a%20b", "x" * 65, "a*b", "a:b"]


def now_us() -> int:
    return time.time_ns() // 1_000


# -- blocks ---------------------------------------------------------------------------------------


async def test_block_removes_follows_both_ways_and_refuses_new_ones(
    driver: Driver, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await driver.follows(a, b)
    await driver.follows(b, a)
    await driver.follows(c, a)
    await driver.follows(c, b)
    assert await driver.counts(a) == full_counts(2, 1, friends=1)
    assert await driver.counts(b) == full_counts(2, 1, friends=1)
    assert await driver.ids(a, "friends") == [b]

    response = await driver.block(a, b)
    assert driver.last_status == 200
    assert response == BlockBody(blocking=True, created=True, removed_follows=2)

    assert await driver.counts(a) == full_counts(1, 0)
    assert await driver.counts(b) == full_counts(1, 0)
    assert await driver.counts(c) == full_counts(0, 2)
    assert await driver.ids(a, "followers") == [c]
    assert await driver.ids(a, "following") == []
    assert await driver.ids(b, "followers") == [c]
    assert await driver.ids(b, "following") == []
    assert await driver.ids(a, "friends") == []
    assert await driver.ids(b, "friends") == []
    assert await driver.relation(a, b) == relationship(blocking=True)
    assert await driver.relation(b, a) == relationship(blocked_by=True)

    again = await driver.block(a, b)
    assert again == BlockBody(blocking=True, created=False, removed_follows=0)

    before = await driver.view([a, b, c])
    for src, dst in ((a, b), (b, a)):
        error = await refused(driver.follow(src, dst), 403, "blocked")
        assert a in error.message and b in error.message
    assert await driver.view([a, b, c]) == before

    unblocked = await driver.unblock(a, b)
    assert driver.last_status == 200
    assert unblocked == UnblockBody(blocking=False, removed=True)
    again = await driver.unblock(a, b)
    assert again == UnblockBody(blocking=False, removed=False)
    rel = await driver.relation(a, b)
    assert not rel.blocking and not rel.blocked_by

    # The follows the block removed are not restored...
    assert await driver.view([a, b, c]) == before
    # ...but new follows work again, both ways.
    await driver.follows(b, a)
    await driver.follows(a, b)
    assert await driver.counts(a) == full_counts(2, 1, friends=1)
    assert await driver.ids(a, "friends") == [b]


async def test_block_by_the_followed_user_and_of_unknown_users(
    driver: Driver, uid: UserIds
) -> None:
    a, b, ghost = uid("a"), uid("b"), uid("ghost")
    await driver.follows(a, b)
    response = await driver.block(b, a)
    assert response == BlockBody(blocking=True, created=True, removed_follows=1)
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(b) == full_counts(0, 0)
    assert await driver.ids(b, "followers") == []
    assert (await driver.relation(a, b)).blocked_by is True
    await refused(driver.follow(a, b), 403, "blocked")
    # The blocked side cannot lift the block: it does not own it.
    not_mine = await driver.unblock(a, b)
    assert not_mine == UnblockBody(blocking=False, removed=False)
    await refused(driver.follow(a, b), 403, "blocked")
    # Blocks both ways: lifting one leaves the other in force.
    both = await driver.block(a, b)
    assert both == BlockBody(blocking=True, created=True, removed_follows=0)
    assert await driver.relation(a, b) == relationship(blocking=True, blocked_by=True)
    assert (await driver.unblock(b, a)).removed is True
    for src, dst in ((a, b), (b, a)):
        await refused(driver.follow(src, dst), 403, "blocked")
    assert (await driver.unblock(a, b)).removed is True
    await driver.follows(b, a)
    assert await driver.counts(a) == full_counts(1, 0)

    # Blocking a user nobody knows works, and then refuses that user's follows.
    fresh = await driver.block(a, ghost)
    assert fresh == BlockBody(blocking=True, created=True, removed_follows=0)
    await refused(driver.follow(ghost, a), 403, "blocked")
    assert await driver.counts(ghost) == full_counts(0, 0)


async def test_block_removes_a_spam_users_follow_exactly(driver: Driver, uid: UserIds) -> None:
    """A spam user's follows are flagged (counted apart); a block must unflag them exactly."""
    spam, a = uid("spam"), uid("a")
    await driver.set_status(spam, "spam")
    await driver.drain()
    await driver.follows(spam, a)
    await driver.follows(a, spam)
    assert await driver.counts(a) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    response = await driver.block(a, spam)
    assert response.removed_follows == 2
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(spam) == full_counts(0, 0)
    await driver.set_status(spam, "active")
    await driver.drain()
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(spam) == full_counts(0, 0)


async def test_self_block_is_403_and_bad_ids_are_422(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    a = uid("a")
    for write in (driver.block, driver.unblock):
        error = await refused(write(a, a), 403, "self_follow")
        assert a in error.message
    for bad in BAD_IDS:
        for path in (f"/v1/users/{bad}/blocks/{a}", f"/v1/users/{a}/blocks/{bad}"):
            for method in ("PUT", "DELETE"):
                assert_error(await client.request(method, path), 422, "invalid_user_id")
    assert (await driver.relation(a, a)).blocking is False
    assert await driver.counts(a) == full_counts(0, 0)


async def test_blocked_users_are_left_out_of_familiar_followers_and_friends(
    driver: Driver, uid: UserIds
) -> None:
    viewer, target = uid("viewer"), uid("target")
    f1, f2, f3 = uid("f1"), uid("f2"), uid("f3")
    for friend in (f1, f2, f3):
        await driver.follows(viewer, friend)
        await driver.follows(friend, viewer)
        await driver.follows(friend, target)
    familiar = ("familiar_followers", viewer, target)
    assert await driver.shared(*familiar) == (3, [f3, f2, f1])
    assert await driver.ids(viewer, "friends") == [f3, f2, f1]

    # The viewer blocks one of them, and another blocks the viewer.
    await driver.block(viewer, f1)
    await driver.block(f2, viewer)
    assert await driver.shared(*familiar) == (1, [f3])
    assert await driver.ids(viewer, "friends") == [f3]
    assert await driver.counts(viewer) == full_counts(1, 1, friends=1)
    assert await driver.ids(f1, "friends") == []
    assert await driver.ids(f2, "friends") == []
    # Unblocking does not bring them back (their follows are gone).
    await driver.unblock(viewer, f1)
    assert await driver.shared(*familiar) == (1, [f3])
    assert await driver.ids(viewer, "friends") == [f3]


# -- statuses -------------------------------------------------------------------------------------


async def test_status_is_set_shown_and_validated(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    user, ghost, fan = uid("user"), uid("ghost"), uid("fan")
    await driver.follows(fan, user)

    assert await driver.status(ghost) == StatusBody(
        user_id=ghost, exists=False, status="active", fanout_pending=False, erasing=False
    )
    assert await driver.status(user) == StatusBody(
        user_id=user, exists=True, status="active", fanout_pending=False, erasing=False
    )

    body = await driver.set_status(user, "suspended")
    assert body.user_id == user and body.exists is True
    assert body.status == "suspended" and body.erasing is False
    assert body.fanout_pending is True  # active -> inactive: counts of others must update
    await driver.drain()
    assert await driver.status(user) == StatusBody(
        user_id=user, exists=True, status="suspended", fanout_pending=False, erasing=False
    )

    # Between two inactive statuses there is nothing to fan out.
    body = await driver.set_status(user, "spam")
    assert body.status == "spam" and body.fanout_pending is False
    assert (await driver.status(user)).status == "spam"

    before = await driver.view([user, fan])
    for bad in ({"status": "banned"}, {"status": ""}, {"status": None}, {}, {"state": "active"}):
        response = await client.put(f"/v1/users/{user}/status", json=bad)
        assert_error(response, 422, "invalid_request")
    response = await client.put(f"/v1/users/{user}/status", content=b"not json")
    assert response.status_code == 422
    assert (await driver.status(user)).status == "spam"
    assert await driver.view([user, fan]) == before

    # Bad statuses never create users either.
    response = await client.put(f"/v1/users/{ghost}/status", json={"status": "deleted"})
    assert_error(response, 422, "invalid_request")
    assert (await driver.status(ghost)).exists is False

    for bad in BAD_IDS:
        response = await client.put(f"/v1/users/{bad}/status", json={"status": "spam"})
        assert_error(response, 422, "invalid_user_id")
        assert_error(await client.get(f"/v1/users/{bad}/status"), 422, "invalid_user_id")

    await driver.set_status(user, "active")
    await driver.drain()
    assert (await driver.status(user)).status == "active"
    assert await driver.counts(fan) == full_counts(0, 1)


async def test_suspended_user_disappears_and_cannot_follow_or_be_followed(
    driver: Driver, uid: UserIds
) -> None:
    s, a, b, c, d = uid("s"), uid("a"), uid("b"), uid("c"), uid("d")
    await driver.follows(s, a)
    await driver.follows(s, b)
    await driver.follows(a, s)
    await driver.follows(c, s)
    await driver.follows(c, b)
    users = [s, a, b, c, d]
    common_followers = ("common_followers", a, b)  # who follows both a and b
    common_following = ("common_following", a, c)  # whom both a and c follow
    familiar = ("familiar_followers", c, a)  # whom c follows that follow a
    assert await driver.shared(*common_followers) == (1, [s])
    assert await driver.shared(*common_following) == (1, [s])
    assert await driver.shared(*familiar) == (1, [s])
    active_view = await driver.view(users)
    assert active_view[a]["counts"] == full_counts(1, 1, friends=1)  # type: ignore[index]

    await driver.set_status(s, "suspended")
    # Lists hide the user at once; the counts of others follow in the background.
    assert await driver.ids(a, "followers") == []
    assert await driver.ids(b, "followers") == [c]
    assert await driver.ids(c, "following") == [b]
    await driver.drain()

    assert await driver.counts(s) == full_counts(2, 2, friends=1)  # its own view is unchanged
    assert await driver.counts(a) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    assert await driver.counts(b) == full_counts(2, 0, followers_active=1)
    assert await driver.counts(c) == full_counts(0, 2, following_active=1)
    assert await driver.ids(a, "followers") == []
    assert await driver.ids(a, "following") == []
    assert await driver.ids(a, "friends") == []
    assert await driver.ids(b, "followers") == [c]
    assert await driver.ids(c, "following") == [b]
    assert await driver.shared(*common_followers) == (0, [])
    assert await driver.shared(*common_following) == (0, [])
    assert await driver.shared(*familiar) == (0, [])

    # No follows from or to a suspended user, and a refusal changes nothing.
    before = await driver.view(users)
    error = await refused(driver.follow(s, c), 403, "user_suspended")
    assert s in error.message
    error = await refused(driver.follow(d, s), 403, "user_suspended")
    assert s in error.message
    assert await driver.view(users) == before
    assert not (await driver.relation(d, s)).following

    await driver.set_status(s, "active")
    await driver.drain()
    assert await driver.view(users) == active_view
    assert await driver.shared(*common_followers) == (1, [s])
    assert await driver.shared(*common_following) == (1, [s])
    assert await driver.shared(*familiar) == (1, [s])
    await driver.follows(s, c)
    await driver.follows(d, s)


async def test_spam_user_follows_in_the_shadow(driver: Driver, uid: UserIds) -> None:
    p, a, b, m, n, q = uid("p"), uid("a"), uid("b"), uid("m"), uid("n"), uid("q")
    await driver.follows(p, a)  # p follows a
    await driver.follows(b, p)  # b follows p
    await driver.follows(p, m)  # p and m are friends
    await driver.follows(m, p)
    users = [p, a, b, m, n, q]

    await driver.set_status(p, "spam")
    await driver.drain()
    assert (await driver.status(p)).status == "spam"

    # A spam user still follows (shadow), and may still be followed.
    await driver.follows(p, n)
    await driver.follows(q, p)

    assert await driver.counts(a) == full_counts(1, 0, followers_active=0)
    assert await driver.counts(n) == full_counts(1, 0, followers_active=0)
    assert await driver.counts(b) == full_counts(0, 1, following_active=0)
    assert await driver.counts(q) == full_counts(0, 1, following_active=0)
    assert await driver.counts(m) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    assert await driver.counts(p) == full_counts(3, 3, friends=1)
    for user, side in ((a, "followers"), (n, "followers"), (b, "following"), (q, "following")):
        assert await driver.ids(user, side) == [], (user, side)
    assert await driver.ids(m, "friends") == []
    assert await driver.ids(m, "followers") == []
    assert await driver.ids(p, "following") == [n, m, a]  # the spammer sees its own follows

    # Unfollowing a shadow follow keeps the counts exact.
    await driver.unfollow(p, n)
    assert await driver.counts(n) == full_counts(0, 0)
    await driver.follows(p, n)

    await driver.set_status(p, "active")
    await driver.drain()
    assert await driver.counts(a) == full_counts(1, 0)
    assert await driver.counts(n) == full_counts(1, 0)
    assert await driver.counts(b) == full_counts(0, 1)
    assert await driver.counts(q) == full_counts(0, 1)
    assert await driver.counts(m) == full_counts(1, 1, friends=1)
    assert await driver.counts(p) == full_counts(3, 3, friends=1)
    assert await driver.ids(a, "followers") == [p]
    assert await driver.ids(n, "followers") == [p]
    assert await driver.ids(b, "following") == [p]
    assert await driver.ids(q, "following") == [p]
    assert await driver.ids(m, "friends") == [p]
    assert (await driver.view(users))[p]["counts"] == full_counts(3, 3, friends=1)  # type: ignore[index]


async def test_a_status_propagation_in_many_batches(
    make_service: Callable[..., Services], service_key: str, uid: UserIds
) -> None:
    service = make_service(fanout_batch_edges=7, rate_limits_enabled=False)
    spammer = uid("spammer")
    followed = [uid(f"followed{n}") for n in range(30)]
    fans = [uid(f"fan{n}") for n in range(30)]
    for user in followed:
        await service.relations.follow(spammer, user)
    for fan in fans:
        await service.relations.follow(fan, spammer)
    for user in followed[:5]:  # some friends too
        await service.relations.follow(user, spammer)
    async with Driver(app_client(create_app(service.settings, service), service_key)) as driver:
        for user in followed + fans:  # warm mirrors take the propagation's refreshes
            await driver.counts(user)
        await driver.set_status(spammer, "spam")
        state = await driver.status(spammer)
        assert state.status == "spam"
        await service.core.jobs.drain()
        assert (await driver.status(spammer)).fanout_pending is False
        for user in followed[5:]:
            assert await driver.counts(user) == full_counts(1, 0, followers_active=0)
        for user in followed[:5]:
            assert await driver.counts(user) == full_counts(
                1, 1, followers_active=0, following_active=0
            )
        for fan in fans:
            assert await driver.counts(fan) == full_counts(0, 1, following_active=0)

        await driver.set_status(spammer, "active")
        await service.core.jobs.drain()
        for user in followed[5:]:
            assert await driver.counts(user) == full_counts(1, 0)
        for user in followed[:5]:
            assert await driver.counts(user) == full_counts(1, 1, friends=1)
        for fan in fans:
            assert await driver.counts(fan) == full_counts(0, 1)
        assert await driver.counts(spammer) == full_counts(35, 30, friends=5)


async def test_status_flip_flop_settles_on_the_last_status(driver: Driver, uid: UserIds) -> None:
    user, a, b = uid("user"), uid("a"), uid("b")
    await driver.follows(user, a)
    await driver.follows(b, user)
    for status in ("spam", "active", "suspended", "active", "spam"):
        await driver.set_status(user, status)
    await driver.drain()
    assert await driver.status(user) == StatusBody(
        user_id=user, exists=True, status="spam", fanout_pending=False, erasing=False
    )
    assert await driver.counts(a) == full_counts(1, 0, followers_active=0)
    assert await driver.counts(b) == full_counts(0, 1, following_active=0)
    await driver.set_status(user, "active")
    await driver.drain()
    assert await driver.counts(a) == full_counts(1, 0)
    assert await driver.counts(b) == full_counts(0, 1)


# -- limits ---------------------------------------------------------------------------------------


async def test_following_limit(make_driver: MakeDriver, uid: UserIds) -> None:
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(5)]
    async with make_driver(max_following=3) as driver:
        for target in targets[:3]:
            await driver.follows(user, target)
        error = await refused(driver.follow(user, targets[3]), 409, "following_limit")
        assert "3" in error.message and user in error.message
        assert await driver.counts(user) == full_counts(0, 3)
        assert await driver.counts(targets[3]) == full_counts(0, 0)
        assert not (await driver.relation(user, targets[3])).following
        # Re-following at the limit is never refused.
        assert await driver.follow(user, targets[0]) == FollowBody(following=True, created=False)
        # Others may still follow the user at its limit.
        await driver.follows(targets[4], user)

        await driver.unfollow(user, targets[1])
        await driver.follows(user, targets[3])
        await refused(driver.follow(user, targets[4]), 409, "following_limit")
        assert await driver.ids(user, "following") == [targets[3], targets[2], targets[0]]
        assert await driver.counts(user) == full_counts(1, 3)


async def test_follow_rate_limit_resets_after_the_window(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(5)]
    async with make_driver(follows_per_day=3, follow_window_seconds=2) as driver:
        await driver.follows(user, targets[0])
        # Repeated follows of one user are not new follows: they use up nothing.
        for _ in range(4):
            assert await driver.follow(user, targets[0]) == FollowBody(
                following=True, created=False
            )
        await driver.follows(user, targets[1])
        await driver.follows(user, targets[2])

        error = await refused(driver.follow(user, targets[3]), 429, "follow_rate_limit")
        assert error.retry_after is not None and 1 <= int(error.retry_after) <= 2
        assert user in error.message and "allowed at " in error.message
        stamp = error.message.rsplit("allowed at ", 1)[1].rstrip(".")
        resets = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        assert datetime.now(UTC) < resets <= datetime.now(UTC) + timedelta(seconds=2)
        assert await driver.counts(user) == full_counts(0, 3)
        assert await driver.counts(targets[3]) == full_counts(0, 0)
        # Re-following is never refused, even at the rate limit.
        assert await driver.follow(user, targets[1]) == FollowBody(following=True, created=False)

        await asyncio.sleep(max(0.0, (resets - datetime.now(UTC)).total_seconds()) + 0.05)
        await driver.follows(user, targets[3])
        assert await driver.counts(user) == full_counts(0, 4)
        assert await driver.ids(targets[3], "followers") == [user]


async def test_unfollow_and_refollow_churn_counts_against_the_rate_limit(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    user, target, other = uid("user"), uid("target"), uid("other")
    async with make_driver(follows_per_day=3, follow_window_seconds=60) as driver:
        for _ in range(3):
            await driver.follows(user, target)
            await driver.unfollow(user, target)
        error = await refused(driver.follow(user, target), 429, "follow_rate_limit")
        assert error.retry_after is not None and 1 <= int(error.retry_after) <= 60
        await refused(driver.follow(user, other), 429, "follow_rate_limit")
        assert await driver.counts(user) == full_counts(0, 0)
        assert await driver.counts(target) == full_counts(0, 0)
    # The limit belongs to the follower: another user is not affected.
    async with make_driver(follows_per_day=3, follow_window_seconds=60) as driver:
        await driver.follows(other, target)


# -- erasure --------------------------------------------------------------------------------------


async def test_erasing_an_unknown_user_and_bad_ids(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    ghost = uid("ghost")
    assert await driver.erase(ghost) == EraseBody(user_id=ghost, state="absent")
    assert driver.last_status == 200
    assert (await driver.status(ghost)).exists is False
    for bad in BAD_IDS:
        assert_error(await client.delete(f"/v1/users/{bad}"), 422, "invalid_user_id")


async def test_follows_to_and_from_an_erasing_user_are_409(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    user, fan, followed, newcomer = uid("user"), uid("fan"), uid("followed"), uid("newcomer")
    await driver.follows(fan, user)
    await driver.follows(user, followed)
    assert (await backends.core.neo4j.moderation.erase_begin(user))[
        0
    ]  # as DELETE does, before its job starts

    assert (await driver.status(user)).erasing is True
    before = await driver.view([fan, followed, newcomer])
    for src, dst in ((newcomer, user), (user, newcomer)):
        error = await refused(driver.follow(src, dst), 409, "user_erasing")
        assert user in error.message
    # A follow that already exists is just reported.
    assert await driver.follow(fan, user) == FollowBody(following=True, created=False)
    assert await driver.view([fan, followed, newcomer]) == before

    assert await driver.erase(user) == EraseBody(user_id=user, state="erasing")
    assert driver.last_status == 202
    await driver.drain()
    assert (await driver.status(user)).exists is False
    assert await driver.counts(fan) == full_counts(0, 0)
    assert await driver.counts(followed) == full_counts(0, 0)
    assert await driver.counts(user) == full_counts(0, 0)


async def test_erasing_a_spam_user_with_blocks(driver: Driver, uid: UserIds) -> None:
    spam, a, b, c, d = uid("spam"), uid("a"), uid("b"), uid("c"), uid("d")
    await driver.follows(spam, a)
    await driver.follows(spam, b)
    await driver.follows(c, spam)
    await driver.block(spam, d)
    await driver.block(b, c)
    await driver.set_status(spam, "spam")
    await driver.drain()
    await driver.follows(spam, c)  # a shadow follow made while spam
    assert await driver.counts(a) == full_counts(1, 0, followers_active=0)

    await driver.erase(spam)
    assert driver.last_status == 202
    await driver.drain()
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(b) == full_counts(0, 0)
    assert await driver.counts(c) == full_counts(0, 0)
    assert await driver.ids(c, "following") == []
    assert (await driver.relation(d, spam)).blocked_by is False
    assert (await driver.relation(c, b)).blocked_by is True  # others' blocks stay
    assert await driver.status(spam) == StatusBody(
        user_id=spam, exists=False, status="active", fanout_pending=False, erasing=False
    )


async def test_an_erased_spam_users_id_comes_back_as_an_active_user(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    """After an erasure the id is free: following it makes a new user, active like any other."""
    spam, fan, friend = uid("spam"), uid("fan"), uid("friend")
    await driver.follows(spam, fan)
    await driver.set_status(spam, "spam")
    await driver.drain()
    await driver.erase(spam)
    assert driver.last_status == 202
    await driver.drain()
    assert (await driver.status(spam)).exists is False

    await driver.follows(friend, spam)
    await driver.follows(spam, friend)
    try:
        assert (await driver.status(spam)).status == "active"
        assert await driver.counts(friend) == full_counts(1, 1, friends=1)
        assert await driver.ids(friend, "following") == [spam]
        assert await driver.ids(friend, "followers") == [spam]
        assert await driver.ids(friend, "friends") == [spam]
        await assert_consistent(backends, {spam, fan, friend})
    finally:
        # Whatever happened above, leave the mirror right for the module's end check.
        await driver.set_status(spam, "active")
        await driver.drain()


async def test_erasing_a_user_with_5000_followers(
    make_driver: MakeDriver, backends: Services, uid: UserIds
) -> None:
    star, other = uid("star"), uid("other")
    fans = [uid(f"fan{n}") for n in range(5_000)]
    followed = [uid(f"followed{n}") for n in range(20)]
    graph = backends.core.neo4j.bulk
    await graph.load_users([star, other, *fans])
    start = now_us() - 60_000_000
    for chunk in range(0, len(fans), 1_000):
        rows = [{"s": f, "d": star, "t": start + 2 * n} for n, f in enumerate(fans)][
            chunk : chunk + 1_000
        ]
        rows += [{"s": f, "d": other, "t": start + 2 * n + 1} for n, f in enumerate(fans)][
            chunk : chunk + 1_000
        ]
        await graph.load_edges(rows)

    async with make_driver(fanout_batch_edges=200) as driver:
        service = driver.services
        for user in followed:
            await driver.follows(star, user)
        await driver.follows(followed[0], star)  # a friend
        await driver.follows(followed[1], fans[0])
        await driver.block(followed[2], star)
        # Warm mirrors: the erasure must keep them exact, not merely let them go cold. Built in
        # chunks, each well inside a request's transaction timeout on a slow day.
        everyone = [star, other, *fans, *followed]
        for start_at in range(0, len(everyone), 500):
            await service.core.mirror_sync.rebuild(everyone[start_at : start_at + 500])
        assert await driver.counts(star) == full_counts(5_001, 19, friends=1)  # one blocked it
        assert await driver.counts(fans[7]) == full_counts(0, 2)
        assert await driver.counts(other) == full_counts(5_000, 0)

        assert await driver.erase(star) == EraseBody(user_id=star, state="erasing")
        assert driver.last_status == 202
        during = await driver.status(star)
        if during.exists:  # the job runs in 25+ batches: normally still busy here
            assert during.erasing is True
            assert during.progress is None or isinstance(during.progress, dict)
            try:
                await driver.follow(other, star)
            except GraphError as error:  # unless the node went in between
                assert (error.status, error.code) == (409, "user_erasing")
        await service.core.jobs.drain()

        assert await driver.status(star) == StatusBody(
            user_id=star, exists=False, status="active", fanout_pending=False, erasing=False
        )
        assert await driver.counts(star) == full_counts(0, 0)
        assert await driver.ids(star, "followers") == []
        assert await driver.ids(star, "following") == []
        assert await driver.counts(other) == full_counts(5_000, 0)
        for user in followed:
            expected = full_counts(0, 1) if user == followed[1] else full_counts(0, 0)
            assert await driver.counts(user) == expected, user
            assert star not in await driver.ids(user, "followers")
        assert (await driver.relation(followed[2], star)).blocking is False
        # Every fan: exact counts (from the warm mirror) and a following list without the star.
        fan_counts = []
        for chunk in range(0, len(fans), 50):  # within the Redis pool's size
            fan_counts += await asyncio.gather(
                *(service.follow_pages.counts(f) for f in fans[chunk : chunk + 50])
            )
        assert {f: c for f, c in zip(fans, fan_counts, strict=True) if c.following != 1} == {}
        assert all(c.followers == 0 for c in fan_counts[1:]) and fan_counts[0].followers == 1
        for fan in fans[::500]:
            assert await driver.counts(fan) == full_counts(1 if fan == fans[0] else 0, 1)
            assert await driver.ids(fan, "following") == [other]
        assert len(await driver.ids(other, "followers")) == 5_000
        truth = await backends.core.neo4j.snapshots.snapshots(fans)
        assert {f: s.totals.following for f, s in truth.items() if s.totals.following != 1} == {}
        assert star not in await backends.core.neo4j.snapshots.snapshots([star])
    await assert_consistent(backends, {star, other, *fans, *followed})


# -- unknown and malformed ids --------------------------------------------------------------------


async def test_unknown_ids_give_empty_answers(driver: Driver, uid: UserIds) -> None:
    ghost, other, known = uid("ghost"), uid("other"), uid("known")
    await driver.follows(known, other)
    nothing = relationship()
    answer = await driver.relationships(ghost, [other, known])
    assert answer == RelationshipsBody(relationships={other: nothing, known: nothing})
    assert await driver.relation(known, ghost) == nothing
    assert await driver.shared("familiar_followers", ghost, other) == (0, [])
    assert await driver.shared("familiar_followers", known, ghost) == (0, [])
    assert await driver.ids(ghost, "friends") == []
    unblock = await driver.unblock(ghost, other)
    assert unblock == UnblockBody(blocking=False, removed=False)
    assert (await driver.status(ghost)).exists is False
    assert await driver.counts(ghost) == full_counts(0, 0)


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_malformed_ids_are_422(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds, bad: str
) -> None:
    good = uid("good")
    for method, path in (
        ("GET", f"/v1/users/{bad}/relationships?ids={good}"),
        ("GET", f"/v1/users/{good}/relationships?ids={bad}"),
        ("GET", f"/v1/users/{bad}/familiar-followers/{good}"),
        ("GET", f"/v1/users/{good}/familiar-followers/{bad}"),
        ("GET", f"/v1/users/{bad}/friends"),
        ("GET", f"/v1/users/{bad}/status"),
        ("DELETE", f"/v1/users/{bad}"),
        ("PUT", f"/v1/users/{bad}/blocks/{good}"),
        ("DELETE", f"/v1/users/{good}/blocks/{bad}"),
    ):
        assert_error(await client.request(method, path), 422, "invalid_user_id")
    assert await driver.counts(good) == full_counts(0, 0)


# -- stops between a commit and its mirror write (found in review) ------------------------------


async def test_an_erasure_stopped_before_mirroring_a_batch_replays_it(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    star = uid("star")
    fans = [uid(f"fan{n}") for n in range(12)]
    for fan in fans:
        await driver.follows(fan, star)
    service = driver.services
    await service.core.mirror_sync.rebuild([star, *fans])  # warm: a missed removal would show
    assert (await backends.core.neo4j.moderation.erase_begin(star))[0]
    # A batch commits in Neo4j, and the process stops before its mirror write.
    removed = await backends.core.neo4j.moderation.erase_batch(star, Side.FOLLOWERS, 5)
    assert len(removed) == 5
    await service.moderation.start_erasure(star)  # as on the next start
    await service.core.jobs.drain()
    for fan in fans:
        assert await driver.counts(fan) == full_counts(0, 0), fan
        assert await driver.ids(fan, "following") == []
    await assert_consistent(backends, {star, *fans})


async def test_two_users_who_follow_each_other_erased_together(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    x, f, g = uid("x"), uid("f"), uid("g")
    await driver.follows(x, f)
    await driver.follows(f, x)
    await driver.follows(g, x)
    await driver.follows(g, f)
    service = driver.services
    await service.core.mirror_sync.rebuild([x, f, g])
    for user in (x, f):
        await driver.erase(user)
        assert driver.last_status == 202
    await service.core.jobs.drain()
    assert await driver.counts(g) == full_counts(0, 0)
    assert await driver.ids(g, "following") == []
    for user in (x, f):
        assert (await driver.status(user)).exists is False
    await assert_consistent(backends, {x, f, g})


async def test_a_retried_block_repairs_a_lost_mirror_write(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await driver.follows(b, a)
    await driver.follows(a, b)
    await driver.services.core.mirror_sync.rebuild([a, b])
    await commit_only(backends, WriteKind.BLOCK, a, b)  # its mirror write never happened
    assert await driver.ids(a, "followers") == [b]  # stale, as mirrored
    response = await driver.block(a, b)  # the client retries
    assert response == BlockBody(blocking=True, created=False, removed_follows=0)
    assert await driver.ids(a, "followers") == []
    assert await driver.counts(a) == full_counts(0, 0)
    assert await driver.counts(b) == full_counts(0, 0)


async def test_a_lost_status_write_is_repaired_by_the_status_propagation(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    user, fan = uid("user"), uid("fan")
    await driver.follows(user, fan)
    assert await driver.ids(fan, "followers") == [user]
    await backends.core.neo4j.moderation.set_status(
        user, "suspended"
    )  # committed; the process stopped
    service = driver.services
    await service.background.worker.take_moderation_jobs()  # a worker finds the mark
    await service.core.jobs.drain()
    assert await driver.ids(fan, "followers") == []
    assert await driver.counts(fan) == full_counts(1, 0, followers_active=0)
    await driver.set_status(user, "active")
    await service.core.jobs.drain()


async def test_common_lists_need_two_users(driver: Driver, uid: UserIds) -> None:
    a = uid("a")
    for kind in ("common_followers", "common_following"):
        await refused(driver.shared(kind, a, a), 403, "self_action")
