"""Bells on the real servers: a new post of an author rings a `posted` notification into the
notification stream of each follower with `notify` on, once, and of nobody else; the
notifications are sent as Server-Sent Events, resumable with Last-Event-ID, less those of
authors the reader mutes, is in a block with, or who are suspended, and of deleted posts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx
import orjson

from graphsvc.bootstrap import Services
from graphsvc.client import AsyncGraphClient
from graphsvc.domain.follow_options import OptionEdits
from graphsvc.domain.timeline import Post
from tests.support import events
from tests.support.driver import Driver
from tests.support.events import next_event
from tests.support.helpers import bearer
from tests.support.times import at

Uid = Callable[[str], str]


async def rung(service: Services, user: str) -> list[tuple[str, str]]:
    """(author, post) of every notification in the user's stream, oldest first."""
    entries = await service.core.redis.notification_streams.after(user, "0-0", 1_000)
    return [(fields["author"], fields["post"]) for _, fields in entries]


async def test_a_post_rings_every_bell_once_and_nobody_else(driver: Driver, uid: Uid) -> None:
    author, plain, gone = uid("author"), uid("plain"), uid("gone")
    ringers = [uid("ringer") for _ in range(5)]
    for ringer in ringers:
        await driver.follow(ringer, author, notify=True)
    await driver.follow(plain, author)
    await driver.follow(gone, author, notify=True)
    await driver.follow(gone, author, notify=False)  # turned off again
    await driver.publish(author, "p1", at(1))
    await driver.publish(author, "p1", at(1))  # a retry rings nothing more
    await driver.publish(author, "boost", at(2), reblog=True)  # a reblog rings no bell
    await driver.settle()

    service = driver.services
    for ringer in ringers:
        assert await rung(service, ringer) == [(author, "p1")]
    assert await rung(service, plain) == [] and await rung(service, gone) == []
    # a step run again (its process stopped before saving its position) rings nobody twice
    again = await service.core.redis.notification_streams.ring(ringers, Post.of(author, "p1", 1))
    assert again == 0 and await rung(service, ringers[0]) == [(author, "p1")]


async def test_ringing_walks_every_page_of_ringers(
    make_driver: Callable[..., Driver], uid: Uid
) -> None:
    author = uid("author")
    ringers = [uid("ringer") for _ in range(7)]
    async with make_driver(notify_fanout_batch=2) as graph:
        for ringer in ringers:
            await graph.follow(ringer, author, notify=True)
        await graph.publish(author, "p1", at(1))
        await graph.settle()
        for ringer in ringers:
            assert await rung(graph.services, ringer) == [(author, "p1")]


async def test_an_author_without_ringers_queues_no_ringing_until_one_comes(
    driver: Driver, uid: Uid
) -> None:
    author, fan = uid("author"), uid("fan")
    await driver.follow(uid("plain"), author)
    posts = driver.services.core.redis.author_posts
    await driver.publish(author, "p1", at(1))  # its job finds no ringer, and says so
    await driver.settle()
    await driver.publish(author, "p2", at(2))
    assert "bells" not in (await posts.state(author, "p2") or {})  # no ringing job queued
    await driver.follow(fan, author, notify=True)  # the mark takes the quiet back at once
    await driver.publish(author, "p3", at(3))
    assert (await posts.state(author, "p3") or {}).get("bells") == "ringing"
    await driver.settle()
    assert await rung(driver.services, fan) == [(author, "p3")]


async def test_a_quiet_look_is_void_once_a_ringer_came_while_it_looked(
    driver: Driver, uid: Uid
) -> None:
    # the job read its token, found no ringer, and a follow with notify on was mirrored
    # before it said so: the author is not marked quiet
    author, fan = uid("author"), uid("fan")
    await driver.follow(uid("plain"), author)
    await driver.publish(author, "p1", at(1))  # its counts mirrored: the author has a meta
    await driver.settle()
    flags = driver.services.core.redis.bell_flags
    token = await flags.token(author)
    assert token is not None
    await driver.follow(fan, author, notify=True)
    assert not await flags.quiet(author, token)
    assert await flags.quiet(author, await flags.token(author) or "")
    assert await flags.token(uid("never")) is None  # no meta: never marked quiet


served = events.served_app


async def next_posted(lines: AsyncIterator[str]) -> tuple[str, dict]:
    event, event_id, data = await asyncio.wait_for(next_event(lines), 10)
    assert event == "posted", (event, data)
    return event_id, orjson.loads(data)


async def test_notifications_are_sent_filtered_and_replayed(
    served: str, service: Services, service_key: str, uid: Uid
) -> None:
    reader, loud, muted, blocked, banned = (uid(n) for n in ("r", "loud", "mute", "blk", "ban"))
    for author in (loud, muted, blocked, banned):
        await service.relations.follow(reader, author, edits=_notify())
    path = f"/v1/users/{reader}/notifications"
    async with httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key)) as http:
        async with http.stream("GET", path) as response:
            assert response.status_code == 200
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await service.timelines.publish(loud, "a1", at(1))
            await service.core.jobs.drain()
            first_id, posted = await next_posted(lines)
            assert (posted["author"], posted["post_id"]) == (loud, "a1")

        await service.mutes.mute(reader, muted)
        await service.timelines.publish(blocked, "b1", at(2))
        await service.core.jobs.drain()
        assert (blocked, "b1") in await rung(service, reader)
        await service.relations.block(blocked, reader)  # after the bell was rung: hidden
        await service.timelines.publish(muted, "m1", at(3))
        await service.timelines.publish(banned, "x1", at(4))
        await service.timelines.publish(loud, "gone", at(5))
        await service.timelines.publish(loud, "a2", at(6))
        await service.core.jobs.drain()
        await service.moderation.set_status(banned, "suspended")
        await service.timelines.delete(loud, "gone")
        await service.core.jobs.drain()

        headers = {"Last-Event-ID": first_id}
        async with http.stream("GET", path, headers=headers) as response:
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            _, posted = await next_posted(lines)
            assert (posted["author"], posted["post_id"]) == (loud, "a2")
        bad = await http.get(path, headers={"Last-Event-ID": "nope"})
        assert bad.status_code == 400


def _notify() -> OptionEdits:
    return OptionEdits(notify=True)


async def test_the_client_reads_notifications_as_they_are_rung(
    served: str, service: Services, service_key: str, uid: Uid
) -> None:
    reader, author = uid("reader"), uid("author")
    await service.relations.follow(reader, author, edits=_notify())
    async with AsyncGraphClient(served, service_key) as client:
        stream = client.notifications(reader)
        reading = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.3)  # connected, at the stream's end
        await service.timelines.publish(author, "p1", at(1))
        await service.core.jobs.drain()
        told = await asyncio.wait_for(reading, 10)
        assert (told["author"], told["post_id"]) == (author, "p1")
        assert told["at"].utcoffset() is not None
        await stream.aclose()
