"""Mutes against the real servers: what a mute hides from the muter (timeline posts pushed and
pulled, suggestions, new-follower notifications when asked), what it never shows the muted
user, expiry, the muter's own list and who may read it, the cap, erasure both ways, and a
mute mirror that is lost or never written rebuilt from Neo4j.

Celebrities here have TIMELINE_CELEBRITY_FOLLOWERS = 3 followers, as in test_timelines.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import orjson

from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.wire.schemas import MuteBody, UnmuteBody
from tests.support import timelines
from tests.support.driver import Driver, assert_error, refused
from tests.support.events import events_after, next_follower, serving
from tests.support.helpers import bearer
from tests.support.stores import mute_commit_only, relay_due
from tests.support.times import at

UserIds = Callable[[str], str]
api = timelines.timeline_driver  # the driver the tests below ask for


async def test_a_mute_hides_pushed_and_pulled_posts_until_unmuted(
    api: Driver, uid: UserIds
) -> None:
    reader, ordinary, star, friend = uid("reader"), uid("ordinary"), uid("star"), uid("friend")
    assert await api.timeline_of(reader) == []  # the reader is active from now on
    await api.follows(reader, ordinary, star, friend)
    for n in range(3):
        await api.follows(uid(f"fan{n}"), star)
    await api.publish(ordinary, "o1", at(1))
    assert (await api.publish(star, "s1", at(2))).mode == "pull"
    await api.publish(friend, "f1", at(3))
    await api.settle()
    everything = [(friend, "f1"), (star, "s1"), (ordinary, "o1")]
    assert await api.timeline_of(reader) == everything

    assert (await api.mute(reader, ordinary)).created
    assert (await api.mute(reader, star)).created
    assert await api.timeline_of(reader) == [(friend, "f1")]
    await api.publish(ordinary, "o2", at(4))  # still pushed into the home timeline, never shown
    await api.settle()
    assert await api.timeline_of(reader, page_size=1) == [(friend, "f1")]

    assert await api.unmute(reader, ordinary) == UnmuteBody(muting=False, removed=True)
    assert await api.timeline_of(reader) == [(ordinary, "o2"), (friend, "f1"), (ordinary, "o1")]


async def test_the_muted_user_can_tell_nothing(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    me, muted = uid("me"), uid("muted")
    await driver.follows(me, muted)
    before = [await driver.counts(user) for user in (me, muted)]
    start = await service.core.redis.stream.last_id()
    await driver.mute(me, muted, notifications=True)
    # no count moves; follows either way stay and may be made; nothing reaches the stream
    assert [await driver.counts(user) for user in (me, muted)] == before
    assert (await driver.follow(muted, me)).created
    assert (await driver.relation(me, muted)).following
    assert [e["type"] for e in await events_after(service, start, {me, muted})] == ["follow"]
    seen_by_muted = await driver.relation(muted, me)
    assert (seen_by_muted.muting, seen_by_muted.muting_expires_at) == (False, None)
    assert seen_by_muted.following and seen_by_muted.followed_by
    mine = await driver.relation(me, muted)
    assert (mine.muting, mine.muting_expires_at) == (True, None)


async def test_mute_answers_and_refusals(driver: Driver, uid: UserIds) -> None:
    me, other = uid("me"), uid("other")
    first = await driver.mute(me, other)
    assert first == MuteBody(muting=True, created=True, expires_at=None, notifications=False)
    again = await driver.mute(me, other, notifications=True, duration_seconds=3_600)
    assert (again.created, again.notifications) == (False, True)
    assert again.expires_at is not None
    expires = again.expires_at
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)
    assert (await driver.relation(me, other)).muting_expires_at == again.expires_at
    assert (await driver.mute(me, other)).expires_at is None  # a PUT sets every option
    assert await driver.unmute(me, other) == UnmuteBody(muting=False, removed=True)
    assert await driver.unmute(me, other) == UnmuteBody(muting=False, removed=False)
    assert (await driver.relation(me, other)).muting is False

    await refused(driver.mute(me, me), 403, "self_action")
    year = 365 * 86_400
    error = await refused(
        driver.mute(me, other, duration_seconds=year + 1), 422, "invalid_duration"
    )
    assert "MUTE_MAX_SECONDS" in error.message
    await refused(driver.mute(me, other, duration_seconds=0), 422, "invalid_request")
    assert [m async for m in driver.mutes(me)] == []


async def test_an_expired_mute_filters_nothing_and_is_not_listed(api: Driver, uid: UserIds) -> None:
    reader, author = uid("reader"), uid("author")
    assert await api.timeline_of(reader) == []
    await api.follows(reader, author)
    await api.publish(author, "p1", at(1))
    await api.settle()
    await api.mute(reader, author, duration_seconds=1)
    assert await api.timeline_of(reader) == []
    assert [m.user_id async for m in api.mutes(reader)] == [author]
    await asyncio.sleep(1.2)
    assert await api.timeline_of(reader) == [(author, "p1")]
    assert [m async for m in api.mutes(reader)] == []
    assert (await api.relation(reader, author)).muting is False
    # the muter's next mute write deletes it; a new mute of the same user starts afresh
    assert (await api.mute(reader, author)).created
    assert await api.timeline_of(reader) == []


async def test_the_list_is_newest_first_paged_and_the_owners_alone(
    driver: Driver, make_client: Callable[..., httpx.AsyncClient], service: Services, uid: UserIds
) -> None:
    me = uid("me")
    muted = [uid(f"m{n}") for n in range(5)]
    for n, other in enumerate(muted):
        await driver.mute(me, other, notifications=n == 0, duration_seconds=86_400 if n else None)
    listing = [m async for m in driver.mutes(me, page_size=2)]
    assert [m.user_id for m in listing] == muted[::-1]
    assert listing[-1].notifications and listing[-1].expires_at is None
    assert not listing[0].notifications and listing[0].expires_at is not None
    pages = [page async for page in driver.mutes(me, page_size=2).pages()]
    assert [len(p.items) for p in pages] == [2, 2, 1]

    access = service.access
    stranger = (await access.create(frozenset({Scope.READ}), user=uid("x"), name="t")).token
    own = (await access.create(frozenset({Scope.READ}), user=me, name="t")).token
    reader = (await access.create(frozenset({Scope.READ}), name="t")).token
    path = f"/v1/users/{me}/mutes"
    async with make_client(key=None) as http:
        assert_error(await http.get(path, headers=bearer(stranger)), 403, "owner_only")
        assert_error(await http.get(path, headers=bearer(reader)), 403, "owner_only")
        as_other = {**bearer(reader), "X-Graph-Viewer": muted[0]}
        assert_error(await http.get(path, headers=as_other), 403, "owner_only")
        as_me = {**bearer(reader), "X-Graph-Viewer": me}
        assert len((await http.get(path, headers=as_me)).json()["items"]) == 5
        assert len((await http.get(path, headers=bearer(own))).json()["items"]) == 5


async def test_the_cap_refuses_a_new_mute_only(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    me, a, b, c = uid("me"), uid("a"), uid("b"), uid("c")
    async with make_driver(max_mutes=2) as graph:
        await graph.mute(me, a)
        await graph.mute(me, b)
        error = await refused(graph.mute(me, c), 409, "mute_limit")
        assert "MAX_MUTES" in error.message
        assert (await graph.mute(me, a, notifications=True)).notifications  # an update
        await graph.unmute(me, b)
        assert (await graph.mute(me, c)).created


async def test_a_muted_user_is_never_suggested(driver: Driver, uid: UserIds) -> None:
    me, friend, a, b = uid("me"), uid("friend"), uid("a"), uid("b")
    await driver.follow_pairs((me, friend), (friend, a), (friend, b))
    assert {a, b} <= set(await driver.suggested(me))  # now cached
    await driver.mute(me, a)
    assert a not in await driver.suggested(me)
    assert b in await driver.suggested(me)
    await driver.unmute(me, a)
    assert a in await driver.suggested(me)


async def test_new_follower_events_leave_out_only_those_muted_with_notifications(
    service: Services, service_key: str, uid: UserIds
) -> None:
    me, loud, quiet, muted_posts = uid("me"), uid("loud"), uid("quiet"), uid("posts")
    await service.mutes.mute(me, quiet, notifications=True)
    await service.mutes.mute(me, muted_posts)  # posts only: its follow is still told
    headers = bearer(service_key)
    async with (
        serving(service) as url,
        httpx.AsyncClient(base_url=url, timeout=10, headers=headers) as http,
    ):
        async with http.stream("GET", f"/v1/users/{me}/events") as response:
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            await service.relations.follow(quiet, me)
            await service.relations.follow(muted_posts, me)
            first_id, data = await asyncio.wait_for(next_follower(lines), 10)
            assert orjson.loads(data)["follower"] == muted_posts
            await service.relations.follow(loud, me)
            _, data = await asyncio.wait_for(next_follower(lines), 10)
            assert orjson.loads(data)["follower"] == loud
        await service.relations.unfollow(quiet, me)
        await service.relations.follow(quiet, me)
        await service.relations.unfollow(loud, me)
        await service.relations.follow(loud, me)
        headers = {"Last-Event-ID": first_id}
        async with http.stream("GET", f"/v1/users/{me}/events", headers=headers) as response:
            lines = response.aiter_lines()
            replayed = [await asyncio.wait_for(next_follower(lines), 10) for _ in range(2)]
            followers = [orjson.loads(data)["follower"] for _, data in replayed]
            assert followers == [loud, loud]  # the live one and the replayed one


async def test_erasure_removes_mutes_both_ways(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    muter, erased, muted = uid("muter"), uid("erased"), uid("muted")
    await driver.mute(muter, erased, notifications=True)
    await driver.mute(erased, muted)
    await driver.erase(erased)
    await driver.drain()
    assert [m async for m in driver.mutes(muter)] == []
    assert (await driver.relation(muter, erased)).muting is False
    assert await backends.mutes.muted_among(muter, [erased]) == set()
    assert await backends.core.redis.client.exists(backends.core.redis.mutes.key(erased)) == 0
    assert await backends.consistency.check([muter, erased, muted]) == []


async def test_a_lost_or_flushed_mute_mirror_is_rebuilt_from_neo4j(
    api: Driver, backends: Services, uid: UserIds
) -> None:
    reader, author, other = uid("reader"), uid("author"), uid("other")
    assert await api.timeline_of(reader) == []
    await api.follows(reader, author, other)
    await api.publish(author, "p1", at(1))
    await api.publish(other, "q1", at(2))
    await api.settle()
    await api.mute(reader, author)
    # Redis loses the reader's mute mirror (only its key: the servers are shared)
    await backends.core.redis.client.unlink(backends.core.redis.mutes.key(reader))
    assert await api.timeline_of(reader) == [(other, "q1")]

    # The process "dies" between the commit and the mirror write: only Neo4j has the mute.
    await mute_commit_only(backends, reader, other)
    drifts = await backends.consistency.check([reader])
    assert [d.what for d in drifts] == ["mutes"]
    report = await relay_due(api.services)
    assert report.recovered >= 1
    assert await backends.consistency.check([reader]) == []
    assert await api.timeline_of(reader) == []
