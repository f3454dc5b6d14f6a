"""Locked accounts and follow requests on the real servers: a follow of a locked user is a
pending request, in no list and no count, until its owner approves or rejects it or the
requester withdraws it; blocks cancel requests, limits count them, unlocking approves them all,
and nothing is lost when Redis dies mid-approval."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.settings import Settings
from tests.support.driver import Driver, refused
from tests.support.helpers import ThrowawayRedis, app_in_process
from tests.support.stores import relay_due

MakeDriver = Callable[..., Driver]
Uid = Callable[[str], str]


async def locked(driver: Driver, uid: Uid, name: str = "owner") -> str:
    owner = uid(name)
    assert (await driver.set_privacy(owner, locked=True)).locked
    return owner


async def requested_by_three(driver: Driver, uid: Uid) -> tuple[str, str, str, str]:
    """A locked owner, and three who asked to follow it: one suspended since (hidden), one
    marked spam before (in the shadow), one ordinary fan."""
    owner, gone, spam, fan = await locked(driver, uid), uid("gone"), uid("spam"), uid("fan")
    await driver.set_status(spam, "spam")
    for requester in (gone, spam, fan):
        assert (await driver.follow(requester, owner)).requested
    await driver.set_status(gone, "suspended")
    await driver.drain()
    return owner, gone, spam, fan


async def as_user(make_driver: MakeDriver, backends: Services, user: str) -> Driver:
    """A driver with a key bound to ``user`` (to read its own lists and counts)."""
    key = await backends.access.create(frozenset({Scope.READ, Scope.WRITE}), user=user)
    return make_driver(key=key.token)


async def test_a_follow_of_a_locked_user_waits_for_approval_in_no_list_or_count(
    driver: Driver, make_driver: MakeDriver, backends: Services, uid: Uid
) -> None:
    owner, fan = await locked(driver, uid), uid("fan")
    asked = await driver.follow(fan, owner)
    assert (driver.last_status, asked.following, asked.requested, asked.created) == (
        202,
        False,
        True,
        True,
    )
    again = await driver.follow(fan, owner)
    assert (again.requested, again.created) == (True, False)
    assert await driver.ids(owner, "followers") == []
    assert (await driver.counts(owner)).followers == 0
    assert (await driver.counts(fan)).following == 0
    rel = (await driver.relationships(fan, [owner])).relationships[owner]
    assert (rel.following, rel.requested, rel.requested_by) == (False, True, False)
    back = (await driver.relationships(owner, [fan])).relationships[fan]
    assert (back.followed_by, back.requested, back.requested_by) == (False, False, True)
    async with await as_user(make_driver, backends, owner) as mine:
        assert [i.user_id async for i in mine.follow_requests(owner)] == [fan]
        assert (await mine.counts(owner)).pending_requests == 1
        await refused(anext(aiter(mine.sent_follow_requests(fan))), 403, "wrong_acting_user")
    async with await as_user(make_driver, backends, fan) as theirs:
        assert [i.user_id async for i in theirs.sent_follow_requests(fan)] == [owner]
        assert (await theirs.counts(owner)).pending_requests is None  # not its own
        stream = theirs.follow_requests(fan)
        assert [i async for i in stream] == []


async def test_requests_are_read_by_their_owner_only(
    driver: Driver, make_driver: MakeDriver, backends: Services, uid: Uid
) -> None:
    owner, fan, other = await locked(driver, uid), uid("fan"), uid("other")
    await driver.follow(fan, owner)
    service = (await backends.access.create(frozenset({Scope.READ}))).token
    async with make_driver(key=service) as product:
        await refused(anext(aiter(product.follow_requests(owner))), 403, "owner_only")
        product.http.headers["X-Graph-Viewer"] = other
        await refused(anext(aiter(product.follow_requests(owner))), 403, "owner_only")
        product.http.headers["X-Graph-Viewer"] = owner
        assert [i.user_id async for i in product.follow_requests(owner)] == [fan]
    assert [i.user_id async for i in driver.follow_requests(owner)] == [fan]  # an admin key


async def test_approve_reject_and_withdraw(driver: Driver, uid: Uid) -> None:
    owner = await locked(driver, uid)
    a, b, c = uid("a"), uid("b"), uid("c")
    for fan in (a, b, c):
        assert (await driver.follow(fan, owner)).requested
    assert [i.user_id async for i in driver.follow_requests(owner)] == [c, b, a]

    approved = await driver.approve_follow_request(owner, a)
    assert (approved.following, approved.created) == (True, True)
    assert (await driver.approve_follow_request(owner, a)).created is False  # a repeat
    assert await driver.ids(owner, "followers") == [a]
    counts = await driver.counts(owner)
    assert (counts.followers, (await driver.counts(a)).following) == (1, 1)

    rejected = await driver.reject_follow_request(owner, b)
    assert (rejected.following, rejected.removed) == (False, True)
    assert (await driver.reject_follow_request(owner, b)).removed is False
    await refused(driver.approve_follow_request(owner, b), 404, "no_follow_request")
    assert (await driver.follow(b, owner)).requested  # it may ask again

    withdrawn = await driver.unfollow(c, owner)
    assert (withdrawn.removed, withdrawn.withdrawn) == (False, True)
    assert [i.user_id async for i in driver.follow_requests(owner)] == [b]
    # the follow exists whatever the lock says now: an unfollow removes it
    gone = await driver.unfollow(a, owner)
    assert (gone.removed, gone.withdrawn) == (True, False)
    assert (await driver.counts(owner)).followers == 0


async def test_a_block_cancels_requests_both_ways(driver: Driver, uid: Uid) -> None:
    owner, fan = await locked(driver, uid), uid("fan")
    other = await locked(driver, uid, "other")
    await driver.follow(fan, owner)
    await driver.follow(owner, other)
    await driver.block(owner, fan)
    await driver.block(other, owner)
    assert [i async for i in driver.follow_requests(owner)] == []
    assert [i async for i in driver.follow_requests(other)] == []
    await refused(driver.follow(fan, owner), 403, "blocked")


async def test_limits_count_requests_and_are_checked_again_at_approval(
    driver: Driver, make_driver: MakeDriver, uid: Uid
) -> None:
    owner, fan, x, y = await locked(driver, uid), uid("fan"), uid("x"), uid("y")
    async with make_driver(max_following=2) as two:
        assert (await two.follow(fan, owner)).requested
        assert (await two.follow(fan, x)).following
        await refused(two.follow(fan, y), 409, "following_limit")  # a follow and a request
    async with make_driver(follow_requests_max=1) as capped:
        other = await locked(driver, uid, "other")
        await refused(capped.follow(fan, other), 409, "request_limit")  # one waits already
        assert (await capped.follow(fan, uid("open"))).following  # a follow is no request
    async with make_driver(max_following=1) as one:  # the limit was lowered since
        await refused(one.approve_follow_request(owner, fan), 409, "following_limit")
    assert [i.user_id async for i in driver.follow_requests(owner)] == [fan]  # still pending
    assert (await driver.approve_follow_request(owner, fan)).created


async def test_suspended_requesters_are_hidden_and_spam_ones_stay_in_the_shadow(
    driver: Driver, uid: Uid
) -> None:
    owner, gone, spam, fan = await requested_by_three(driver, uid)
    assert [i.user_id async for i in driver.follow_requests(owner)] == [fan]
    assert (await driver.sent_follow_requests(spam).pages().__anext__()).items  # made, hidden
    await refused(driver.follow(gone, uid("another")), 403, "user_suspended")


async def test_unlocking_approves_every_request_in_the_background(driver: Driver, uid: Uid) -> None:
    owner = await locked(driver, uid)
    fans = [uid(f"fan{n}") for n in range(5)]
    for fan in fans:
        await driver.follow(fan, owner)
    assert (await driver.set_privacy(owner, locked=False)).locked is False
    await driver.drain()
    assert sorted(await driver.ids(owner, "followers")) == sorted(fans)
    assert (await driver.counts(owner)).followers == 5
    assert [i async for i in driver.follow_requests(owner)] == []
    status = await driver.status(owner)
    assert status.approving_requests is False
    late = uid("late")
    assert (await driver.follow(late, owner)).following  # unlocked: a plain follow


async def test_approve_all_approves_what_waited_and_passes_over_refusals(
    driver: Driver, make_driver: MakeDriver, uid: Uid
) -> None:
    owner, fan, busy, x = await locked(driver, uid), uid("fan"), uid("busy"), uid("x")
    await driver.follow_pairs((busy, x))
    await driver.follow(fan, owner)
    await driver.follow(busy, owner)
    async with make_driver(max_following=1) as strict:
        answer = await strict.approve_all_follow_requests(owner)
        assert (strict.last_status, answer.approving, answer.pending) == (202, True, 2)
        await strict.drain()
    assert await driver.ids(owner, "followers") == [fan]
    assert [i.user_id async for i in driver.follow_requests(owner)] == [busy]  # refused: waits
    assert (await driver.privacy(owner)).locked  # approving all does not unlock


async def test_approve_all_counts_the_requests_its_owner_is_shown(
    driver: Driver, make_driver: MakeDriver, backends: Services, uid: Uid
) -> None:
    """Its ``pending`` is the incoming list's size and the counts' ``pending_requests``: a
    suspended requester (hidden) and a spam one (in the shadow) are no request the owner
    waits on."""
    owner, _, _, fan = await requested_by_three(driver, uid)
    async with await as_user(make_driver, backends, owner) as mine:
        shown = [i.user_id async for i in mine.follow_requests(owner)]
        waiting = (await mine.counts(owner)).pending_requests
        answer = await mine.approve_all_follow_requests(owner)
        await mine.drain()
    assert (shown, waiting, answer.pending) == ([fan], 1, 1)


async def test_concurrent_approve_and_withdraw_end_in_one_consistent_state(
    driver: Driver, uid: Uid
) -> None:
    owner = await locked(driver, uid)
    fans = [uid(f"fan{n}") for n in range(6)]
    for fan in fans:
        await driver.follow(fan, owner)

    async def approve(fan: str) -> None:
        try:
            await driver.approve_follow_request(owner, fan)
        except Exception as error:  # withdrawn first: nothing to approve
            assert getattr(error, "code", None) == "no_follow_request", error

    await asyncio.gather(*(task for f in fans for task in (approve(f), driver.unfollow(f, owner))))
    followers = set(await driver.ids(owner, "followers"))
    pending = {i.user_id async for i in driver.follow_requests(owner)}
    assert not pending  # each request was answered or withdrawn
    assert (await driver.counts(owner)).followers == len(followers)
    for fan in fans:
        rel = (await driver.relationships(fan, [owner])).relationships[owner]
        assert rel.following == (fan in followers) and not rel.requested


async def test_requests_feed_no_suggestion_and_are_never_suggested(
    driver: Driver, uid: Uid
) -> None:
    me, friend = uid("me"), uid("friend")
    owner = await locked(driver, uid)
    beyond = uid("beyond")
    await driver.follow_pairs((me, friend), (friend, owner))
    await driver.follow(me, owner)  # a request
    await driver.follow_pairs((owner, beyond))
    found = await driver.suggested(me)
    assert owner not in found  # requested: not suggested again
    assert beyond not in found  # a request is no follow: nothing is found through it


async def test_the_event_stream_carries_request_events(service: Services, uid: Uid) -> None:
    owner, fan, other = uid("owner"), uid("fan"), uid("other")
    from graphsvc.domain.privacy import PrivacyEdit

    await service.privacy.update(owner, PrivacyEdit(locked=True))
    start = await service.core.redis.stream.last_id()
    await service.relations.follow(fan, owner)
    await service.relations.follow(other, owner)
    await service.relations.approve(owner, fan)
    await service.relations.reject(owner, other)
    await service.relations.follow(other, owner)
    await service.relations.unfollow(other, owner)
    found = []
    after = start
    while entries := await service.core.redis.stream.read(after, 1_000):
        after = entries[-1][0]
        found += [
            (f["type"], f["src"], f.get("cause", "")) for _, f in entries if f["dst"] == owner
        ]
    assert found == [
        ("follow_request", fan, ""),
        ("follow_request", other, ""),
        ("follow", fan, "approved"),
        ("follow_request_rejected", other, ""),
        ("follow_request", other, ""),
        ("follow_request_withdrawn", other, ""),
    ]


async def test_erasure_removes_requests_both_ways(driver: Driver, uid: Uid) -> None:
    owner, fan = await locked(driver, uid), uid("fan")
    other = await locked(driver, uid, "other")
    await driver.follow(fan, owner)
    await driver.follow(owner, other)
    await driver.erase(owner)
    await driver.drain()
    assert [i async for i in driver.sent_follow_requests(fan)] == []
    assert [i async for i in driver.follow_requests(other)] == []


# -- Redis down mid-approval (a throwaway redis-server, killed with SIGKILL) -------------------


async def test_nothing_is_lost_when_redis_dies_mid_approval(
    server_settings: Settings, throwaway_redis: ThrowawayRedis, service_key: str
) -> None:
    settings = throwaway_redis.settings(server_settings, "rq:", redis_retry_seconds=0.2)
    run = os.urandom(4).hex()
    owner, a, b = (f"rq{run}.{name}" for name in ("owner", "a", "b"))
    async with app_in_process(settings, service_key) as (service, http):
        graph = Driver(http)
        await graph.set_privacy(owner, locked=True)
        await graph.follow(a, owner)
        await graph.follow(b, owner)
        assert (await graph.counts(owner)).followers == 0  # mirrored

        throwaway_redis.kill9()
        assert (await graph.approve_follow_request(owner, a)).created  # in Neo4j
        assert await graph.ids(owner, "followers") == [a]  # served from Neo4j

        throwaway_redis.start()  # empty
        await asyncio.sleep(0.3)  # the breaker closes
        await relay_due(service)
        assert await service.consistency.check([owner, a, b]) == []
        assert await graph.ids(owner, "followers") == [a]
        assert (await graph.counts(owner)).followers == 1
        assert (await graph.privacy(owner)).locked  # the settings' mirror is rebuilt
        assert [i.user_id async for i in graph.follow_requests(owner)] == [b]
