"""Erasing a user on the real servers, with ids reused: the keys bound to the user are revoked
(and dropped from the cache of the process that erased it), an old bound key never acts as the
next user with the id, nothing buffered or stale (interactions, posts, tombstones) brings the id
back, and nothing a client sends holds an erasure up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.errors import UserErasing
from graphsvc.wire.schemas import EraseBody
from graphsvc.workers.timeline_erasure import TimelineErasure
from tests.support.driver import Driver, eventually, refused
from tests.support.helpers import app_client
from tests.support.stores import erasure_stopped_after_the_node

MakeService = Callable[..., Services]
UserIds = Callable[[str], str]
READ_WRITE = frozenset({Scope.READ, Scope.WRITE})


@asynccontextmanager
async def process(services: Services, *keys: str) -> AsyncIterator[tuple[Driver, ...]]:
    """One API process (one app over ``services``: one key cache), a driver per key."""
    app = create_app(services.settings, services)
    drivers = [Driver(app_client(app, key)) for key in keys]
    try:
        yield tuple(drivers)
    finally:
        for driver in drivers:
            await driver.aclose()


async def state(services: Services, user_id: str) -> tuple[bool, bool]:
    """(the user exists, it is being erased)."""
    found = await services.moderation.user_state(user_id)
    return found is not None, bool(found and found.erasing)


async def test_erasure_revokes_the_bound_keys_at_once_in_the_erasing_process(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    user, other, ghost = uid("user"), uid("other"), uid("ghost")
    # a cache that would trust the key for seconds: the revocation must drop it, not wait (the
    # erasure keeps the id that long, plus a second)
    services = make_service(
        rate_limits_enabled=False, api_key_cache_seconds=3, api_key_stale_seconds=0
    )
    bound = await services.access.create(READ_WRITE, user=user, name="to erase")
    ghosts = await services.access.create(READ_WRITE, user=ghost, name="no node")
    unbound = await services.access.create(READ_WRITE, name="a service's")
    async with process(services, service_key, bound.token, ghosts.token) as (admin, mine, theirs):
        await mine.follows(user, other)  # cached now
        await theirs.counts(ghost)
        assert (await admin.erase(user)).state == "erasing"
        await refused(mine.counts(user), 401, "unauthenticated")
        # a user with no node: its keys are revoked all the same
        assert await admin.erase(ghost) == EraseBody(user_id=ghost, state="absent")
        await refused(theirs.counts(ghost), 401, "unauthenticated")
        await services.core.jobs.drain()
    listed = {key.id: key for key in await services.access.list()}
    assert listed[bound.key.id].revoked and listed[ghosts.key.id].revoked
    assert not listed[unbound.key.id].revoked  # keys of nobody in particular stay


async def test_an_old_bound_key_never_acts_as_the_next_user_with_the_id(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    """Another API process trusts the bound key from its cache for a while after the
    revocation: the id is kept (being erased, refusing every write) until no process may, so
    the key cannot act for a user who takes the id next."""
    user, other = uid("user"), uid("other")
    quick = {
        "rate_limits_enabled": False,
        "api_key_cache_seconds": 0.5,
        "api_key_stale_seconds": 0.0,
    }
    eraser, elsewhere = make_service(**quick), make_service(**quick)
    bound = await eraser.access.create(READ_WRITE, user=user, name="old")
    async with (
        process(eraser, service_key) as (admin,),
        process(elsewhere, bound.token, service_key) as (old_key, service),
    ):
        await old_key.follows(user, other)  # cached elsewhere
        started = time.monotonic()
        assert (await admin.erase(user)).state == "erasing"
        await asyncio.sleep(0.2)  # the follows are gone; the id is kept for the key
        assert await state(eraser, user) == (True, True)
        # a new user who wants the id must wait
        await refused(service.follow(user, other), 409, "user_erasing")
        with pytest.raises(UserErasing):  # no key may be bound to an id being erased
            await eraser.access.create(READ_WRITE, user=user, name="too soon")
        await eraser.core.jobs.drain()
        assert time.monotonic() - started >= eraser.access.trust_seconds - 0.1
        assert await state(eraser, user) == (False, False)
        # the next user with the id
        await service.follows(user, other)
        await refused(old_key.follow(user, uid("third")), 401, "unauthenticated")
        assert (await service.counts(user)).following == 1


async def test_nothing_buffered_or_stale_brings_an_erased_id_back(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    """Interactions accepted before the erasure are dropped while the user is still marked
    (never applied to the next user with the id); a dismissal of or by a user being erased is
    refused, and one naming an erased user creates nobody."""
    user, friend, fan = uid("user"), uid("friend"), uid("fan")
    services = make_service(rate_limits_enabled=False)
    now = datetime.now(UTC)
    async with process(services, service_key) as (graph,):
        await graph.follow_pairs((user, friend), (friend, user), (fan, friend))
        # buffered, not yet flushed: the worker's flusher is behind
        events = [(friend, user, "message", now), (user, friend, "like", now)]
        assert (await graph.record_interactions(events)).accepted == 2
        await services.core.neo4j.moderation.erase_begin(user)  # as DELETE does, before its job
        for src, dst in ((fan, user), (user, fan)):
            await refused(graph.dismiss(src, dst), 409, "user_erasing")
        await services.moderation.start_erasure(user)
        await services.core.jobs.drain()
        assert await state(services, user) == (False, False)
        await refused(graph.dismiss(fan, user), 404, "unknown_user")
        assert await state(services, user) == (False, False)
        # the next user with the id gets none of the old one's interactions
        await graph.follows(user, fan)
        await services.background.interaction_flusher.flush_all()
        assert await services.interactions.affinities(friend, 10) == []
        assert await services.interactions.affinities(user, 10) == []


async def test_blocks_and_dismissals_racing_in_cannot_hold_an_erasure_up(
    make_service: MakeService, service_key: str, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before every attempt to delete the node, a block of the user commits and a dismissal of
    it is tried (the worst moment: after the batches that delete them): the erasure still ends,
    in its first round."""
    user, friend, fan = uid("user"), uid("friend"), uid("fan")
    services = make_service(rate_limits_enabled=False)
    moderation = services.core.neo4j.moderation
    end = moderation.erase_end
    attempts = 0

    async def raced(*args: object) -> object:
        nonlocal attempts
        attempts += 1
        await services.core.neo4j.store.driver.execute_query(
            "MATCH (u:User {id: $user}) MERGE (b:User {id: $blocker}) CREATE (b)-[:BLOCKS]->(u)",
            {"user": user, "blocker": uid("blocker")},
        )
        await services.core.neo4j.suggestions.dismiss(fan, user)
        return await end(*args)

    monkeypatch.setattr(moderation, "erase_end", raced)
    async with process(services, service_key) as (graph,):
        await graph.follow_pairs((user, friend), (fan, friend))
        assert (await graph.erase(user)).state == "erasing"
        await services.core.jobs.drain()
    assert await state(services, user) == (False, False)
    assert attempts == 1


async def test_an_author_being_erased_publishes_nothing_and_the_next_one_finds_nothing(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    """While the erasure keeps the id (here for a bound key an API process may still trust),
    the user publishes nothing; the next user with the id finds none of the old one's posts,
    nor the tombstones of its deleted ones."""
    user, reader = uid("user"), uid("reader")
    services = make_service(
        rate_limits_enabled=False, api_key_cache_seconds=1.0, api_key_stale_seconds=0.0
    )
    await services.access.create(READ_WRITE, user=user, name="kept for its cache")
    at = datetime(2026, 11, 1, tzinfo=UTC)
    author_posts = services.core.redis.author_posts
    async with process(services, service_key) as (graph,):
        await graph.timeline_of(reader)
        await graph.follows(reader, user)
        for post in ("kept", "gone"):
            await graph.publish(user, post, at)
        await graph.delete_post(user, "gone")
        await graph.settle()
        assert await graph.timeline_of(reader) == [(user, "kept")]

        assert (await graph.erase(user)).state == "erasing"

        async def closed() -> bool:
            return await author_posts.mode(user) == "erased"

        await eventually(closed)
        await refused(graph.publish(user, "late", at), 409, "user_erasing")
        await services.core.jobs.drain()
        assert await state(services, user) == (False, False)
        # the next user with the id
        for post in ("kept", "gone", "late"):
            await refused(graph.post(user, post), 404, "post_not_found")
        assert (await graph.publish(user, "gone", at)).created
        await graph.follows(reader, user)
        await graph.settle()
        assert await graph.timeline_of(reader) == [(user, "gone")]


async def test_an_erasure_stopped_after_deleting_the_node_refuses_no_later_post(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    """The erasure forgets the user's timeline after deleting its node: a process stopped
    in between leaves the timeline closed, which the next user's first post finds stale (no
    erasure in Neo4j) and clears."""
    user = uid("user")
    services = make_service(rate_limits_enabled=False)
    at = datetime(2026, 11, 1, tzinfo=UTC)
    async with process(services, service_key) as (graph,):
        for post in ("old", "gone"):
            await graph.publish(user, post, at)
        await graph.delete_post(user, "gone")
        await services.core.jobs.drain()
        await erasure_stopped_after_the_node(services, user)
        assert (await graph.publish(user, "new", at)).created
        for post in ("old", "gone"):
            await refused(graph.post(user, post), 404, "post_not_found")
        assert [p.post_id for p in await services.core.redis.author_posts.newest(user, 10)] == [
            "new"
        ]
        # the stopped erasure's last step, resumed late, forgets nothing of the next user's
        redis = services.core.redis
        erasure = TimelineErasure(
            redis.author_posts,
            redis.home_timelines,
            redis.list_holders,
            redis.exclusion_cache,
            redis.notification_streams,
            redis.timeline_job_queue,
            services.settings.timelines,
        )
        await erasure.forget(user)
        assert [p.post_id for p in await redis.author_posts.newest(user, 10)] == ["new"]
        assert (await graph.post(user, "new")).state in ("fanning_out", "done")
