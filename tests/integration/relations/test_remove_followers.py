"""A user removes its followers, one or a hundred at a time, against the real servers: each
removal is the follower's unfollow (counts, lists, event, timelines), bad input changes
nothing, a bound key removes only its own followers, and a removal racing the follower's
follows leaves the mirror equal to Neo4j."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.edge_writes import REMOVED, WriteKind
from graphsvc.wire.schemas import RemoveFollowerBody, RemoveFollowersBody
from tests.support.driver import Driver, full_counts, refused
from tests.support.run import assert_consistent
from tests.support.stores import commit_only, relay_due

UserIds = Callable[[str], str]


@pytest.fixture
async def bound(backends: Services, uid: UserIds) -> tuple[str, str]:
    """(user, a read and write key bound to it)."""
    user = uid("bound")
    scopes = frozenset({Scope.READ, Scope.WRITE})
    return user, (await backends.access.create(scopes, user=user, name="removal")).token


async def test_removing_a_follower_is_its_unfollow(driver: Driver, uid: UserIds) -> None:
    star, fan, other = uid("star"), uid("fan"), uid("other")
    await driver.follow_pairs((fan, star), (other, star), (star, fan))
    assert await driver.counts(star) == full_counts(2, 1, friends=1)

    removed = await driver.remove_follower(star, fan)
    assert removed == RemoveFollowerBody(followed_by=False, removed=True)
    assert await driver.counts(star) == full_counts(1, 1)
    assert await driver.counts(fan) == full_counts(1, 0)
    assert await driver.ids(star, "followers") == [other]
    assert await driver.ids(fan, "following") == []
    assert await driver.ids(star, "following") == [fan]  # the user's own follow stays
    assert not (await driver.relation(fan, star)).following

    again = await driver.remove_follower(star, fan)
    assert again == RemoveFollowerBody(followed_by=False, removed=False)
    assert await driver.counts(star) == full_counts(1, 1)


async def test_a_removed_follower_may_follow_again(driver: Driver, uid: UserIds) -> None:
    star, fan, other = uid("star"), uid("fan"), uid("other")
    await driver.follow_pairs((fan, star), (other, star))
    assert (await driver.remove_follower(star, fan)).removed
    assert (await driver.follow(fan, star)).created
    assert await driver.ids(star, "followers") == [fan, other]  # the newest follow first
    assert await driver.counts(star) == full_counts(2, 0)


async def events_after(services: Services, start: str, users: set[str]) -> list[tuple[str, ...]]:
    """(type, src, dst, cause) of the stream's entries after ``start`` that involve ``users``."""
    found, after = [], start
    while entries := await services.core.redis.stream.read(after, 1_000):
        after = entries[-1][0]
        found += [f for _, f in entries if {f["src"], f["dst"]} & users]
    return [(e["type"], e["src"], e["dst"], e.get("cause", "")) for e in found]


async def test_the_event_is_the_followers_unfollow_with_its_cause(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    """Consumers see an unfollow by the follower, as for any unfollow; ``cause`` says why."""
    star, fan, stranger = uid("star"), uid("fan"), uid("stranger")
    await driver.follow_pairs((fan, star), (stranger, fan))
    start = await backends.core.redis.stream.last_id()
    await driver.remove_follower(star, fan)
    await driver.remove_follower(star, fan)  # nothing removed: no event
    await driver.remove_followers(fan, [stranger])
    await driver.unfollow(fan, star)  # nothing left to unfollow
    assert await events_after(backends, start, {star, fan, stranger}) == [
        ("unfollow", fan, star, "removed"),
        ("unfollow", stranger, fan, "removed"),
    ]


async def test_removing_an_id_that_only_asked_to_follow_changes_nothing(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    """A pending request is not a follow: a removal leaves it for the owner to answer, and
    nothing reaches the stream (no withdrawal the requester never made)."""
    owner, asker = uid("owner"), uid("asker")
    assert (await driver.set_privacy(owner, locked=True)).locked
    assert (await driver.follow(asker, owner)).requested
    start = await backends.core.redis.stream.last_id()
    alone = await driver.remove_follower(owner, asker)
    assert alone == RemoveFollowerBody(followed_by=False, removed=False)
    batch = await driver.remove_followers(owner, [asker])
    assert batch == RemoveFollowersBody(removed={asker: False})
    assert [i.user_id async for i in driver.follow_requests(owner)] == [asker]
    assert (await driver.relation(asker, owner)).requested
    assert await events_after(backends, start, {owner, asker}) == []
    assert (await driver.approve_follow_request(owner, asker)).created  # still there to answer


async def test_a_removal_whose_mirror_write_was_lost_is_relayed_with_its_cause(
    service: Services, backends: Services, uid: UserIds
) -> None:
    """The process stops between the commit and the mirror write: the outbox event carries
    the cause, and the relay appends it and repairs both users."""
    star, fan = uid("star"), uid("fan")
    await service.relations.follow(fan, star)
    assert (await service.follow_pages.counts(star)).followers == 1  # star's mirror is warm
    start = await backends.core.redis.stream.last_id()
    await commit_only(backends, WriteKind.UNFOLLOW, fan, star, cause=REMOVED)
    assert await backends.consistency.check([fan, star]), "the lost mirror write shows as drift"
    assert (await relay_due(service)).recovered >= 1
    assert await events_after(backends, start, {star, fan}) == [("unfollow", fan, star, "removed")]
    assert await backends.consistency.check([fan, star]) == []
    assert (await service.follow_pages.counts(star)).followers == 0


async def test_a_removed_follower_loses_the_users_posts(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    author, reader = uid("author"), uid("reader")
    async with make_driver() as graph:
        await graph.services.background.timeline_events.prepare()
        await graph.timeline_of(reader)  # the reader reads: its home timeline is kept
        await graph.follow(reader, author)
        await graph.publish(author, "p1", datetime(2026, 11, 1, tzinfo=UTC))
        await graph.settle()
        assert await graph.timeline_of(reader) == [(author, "p1")]
        await graph.remove_follower(author, reader)
        assert await graph.timeline_of(reader) == []
        await graph.settle()
        assert await graph.services.core.redis.home_timelines.entries(reader) == []


async def test_several_followers_at_once(driver: Driver, uid: UserIds) -> None:
    star, ghost, stranger = uid("star"), uid("never-seen"), uid("stranger")
    fans = [uid(f"fan{n}") for n in range(4)]
    for fan in fans:
        await driver.follow(fan, star)
    await driver.follow(stranger, fans[0])  # known to the graph, not a follower of star

    asked = [fans[2], stranger, fans[0], ghost, fans[2]]
    body = await driver.remove_followers(star, asked)
    assert body == RemoveFollowersBody(
        removed={fans[2]: True, stranger: False, fans[0]: True, ghost: False}
    )
    assert list(body.removed) == [fans[2], stranger, fans[0], ghost]  # as asked, once each
    assert await driver.ids(star, "followers") == [fans[3], fans[1]]
    assert await driver.counts(star) == full_counts(2, 0)
    assert await driver.counts(fans[0]) == full_counts(1, 0)  # the stranger's follow stays
    assert await driver.counts(fans[2]) == full_counts(0, 0)
    assert await driver.counts(stranger) == full_counts(0, 1)
    again = await driver.remove_followers(star, fans)
    assert again.removed == {fans[0]: False, fans[1]: True, fans[2]: False, fans[3]: True}
    assert await driver.counts(star) == full_counts(0, 0)


async def test_bad_input_is_refused_before_anything_is_removed(
    driver: Driver, make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    star = uid("star")
    fans = [uid(f"fan{n}") for n in range(3)]
    for fan in fans:
        await driver.follow(fan, star)
    before = await driver.view([star, *fans])

    many = [fans[0], *(uid(f"x{n}") for n in range(100))]
    error = await refused(driver.remove_followers(star, many), 422, "too_many_ids")
    assert "1 to 100" in error.message and "101" in error.message
    await refused(driver.remove_followers(star, []), 422, "too_many_ids")
    error = await refused(driver.remove_followers(star, [fans[0], "a b"]), 422, "invalid_user_id")
    assert "ids item" in error.message
    await refused(driver.remove_followers(star, [fans[1], star]), 403, "self_action")
    await refused(driver.remove_follower(star, star), 403, "self_action")
    response = await driver.http.post(f"/v1/users/{star}/followers/remove", json={"ids": "x"})
    assert response.status_code == 422
    assert await driver.view([star, *fans]) == before

    # the bound is a setting, and the published schema states it
    async with make_driver(remove_followers_max_ids=2) as small:
        error = await refused(small.remove_followers(star, fans), 422, "too_many_ids")
        assert "1 to 2 " in error.message
        schema = (await small.http.get("/openapi.json")).json()["components"]["schemas"]
        assert schema["RemoveFollowersIn"]["properties"]["ids"]["maxItems"] == 2
    assert await driver.view([star, *fans]) == before


async def test_a_bound_key_removes_only_its_own_followers(
    make_driver: Callable[..., Driver], driver: Driver, bound: tuple[str, str], uid: UserIds
) -> None:
    me, key = bound
    someone, fan = uid("someone"), uid("fan")
    await driver.follow_pairs((fan, me), (fan, someone))
    async with make_driver(key=key) as mine:
        await refused(mine.remove_follower(someone, fan), 403, "wrong_acting_user")
        await refused(mine.remove_followers(someone, [fan]), 403, "wrong_acting_user")
        assert (await mine.remove_follower(me, fan)).removed
        # nor may the follower's own key be used against the user it follows
        await refused(mine.remove_follower(fan, me), 403, "wrong_acting_user")
    assert await driver.ids(fan, "following") == [someone]


async def _removals_racing_follows(drivers: list[Driver], star: str, fan: str, seed: int) -> None:
    """100 follows of ``star`` by ``fan`` and removals of ``fan`` by ``star`` at once, spread
    over independent services (as over API processes), so they race in Neo4j and reach Redis
    in any order."""
    rng = random.Random(seed)
    calls: list[Awaitable[object]] = []
    for n in range(100):
        graph = drivers[n % len(drivers)]
        calls.append(
            graph.follow(fan, star) if rng.random() < 0.5 else graph.remove_follower(star, fan)
        )
    await asyncio.gather(*calls)


@pytest.fixture
async def three_drivers(make_driver: Callable[..., Driver]) -> AsyncIterator[list[Driver]]:
    async with make_driver() as one, make_driver() as two, make_driver() as three:
        yield [one, two, three]


async def test_removals_racing_follows_of_one_pair(
    three_drivers: list[Driver], backends: Services, uid: UserIds
) -> None:
    """No reconcile: the mirror must equal Neo4j from the writes alone."""
    graph = three_drivers[0]
    for seed in range(3):
        star, fan = uid("star"), uid("fan")
        await graph.ids(star, "followers")  # warm lists take the writes directly
        await graph.ids(fan, "following")
        await _removals_racing_follows(three_drivers, star, fan, seed)
        truth = (await backends.core.neo4j.snapshots.snapshots([fan]))[fan].totals.following
        assert (await graph.counts(fan)).following == truth
        assert (await graph.counts(star)).followers == truth
        assert await graph.ids(star, "followers") == ([fan] if truth else [])
        await assert_consistent(backends, {star, fan})
