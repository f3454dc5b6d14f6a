"""Erasing a user on the real servers, with ids reused: the keys bound to the user are revoked
(and dropped from the cache of the process that erased it), an old bound key never acts as the
next user with the id, nothing buffered or stale brings the id back, and nothing a client
sends holds an erasure up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import httpx
import pytest
from helpers import app_client

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.errors import UserErasing

MakeService = Callable[..., Services]
UserIds = Callable[[str], str]
READ_WRITE = frozenset({Scope.READ, Scope.WRITE})


@asynccontextmanager
async def process(services: Services, *keys: str) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """One API process (one app over ``services``: one key cache), a client per key."""
    app = create_app(services.settings, services)
    clients = [app_client(app, key) for key in keys]
    try:
        yield tuple(clients)
    finally:
        for client in clients:
            await client.aclose()


async def follow(http: httpx.AsyncClient, src: str, dst: str) -> httpx.Response:
    return await http.put(f"/v1/users/{src}/following/{dst}")


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
        assert (await follow(mine, user, other)).status_code == 200  # cached now
        assert (await theirs.get(f"/v1/users/{ghost}/counts")).status_code == 200
        erased = await admin.delete(f"/v1/users/{user}")
        assert erased.status_code == 202, erased.text
        refused = await mine.get(f"/v1/users/{user}/counts")
        assert refused.status_code == 401, refused.text
        # a user with no node: its keys are revoked all the same
        absent = await admin.delete(f"/v1/users/{ghost}")
        assert absent.json() == {"user_id": ghost, "state": "absent"}
        assert (await theirs.get(f"/v1/users/{ghost}/counts")).status_code == 401
        await services.jobs.drain()
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
    quick = {"rate_limits_enabled": False, "api_key_cache_seconds": 0.5,
             "api_key_stale_seconds": 0.0}  # fmt: skip
    eraser, elsewhere = make_service(**quick), make_service(**quick)
    bound = await eraser.access.create(READ_WRITE, user=user, name="old")
    async with (
        process(eraser, service_key) as (admin,),
        process(elsewhere, bound.token, service_key) as (old_key, service),
    ):
        assert (await follow(old_key, user, other)).status_code == 200  # cached elsewhere
        started = time.monotonic()
        assert (await admin.delete(f"/v1/users/{user}")).status_code == 202
        await asyncio.sleep(0.2)  # the follows are gone; the id is kept for the key
        assert await state(eraser, user) == (True, True)
        taken = await follow(service, user, other)  # a new user who wants the id must wait
        assert taken.status_code == 409 and taken.json()["error"]["code"] == "user_erasing"
        with pytest.raises(UserErasing):  # no key may be bound to an id being erased
            await eraser.access.create(READ_WRITE, user=user, name="too soon")
        await eraser.jobs.drain()
        assert time.monotonic() - started >= eraser.access.trust_seconds - 0.1
        assert await state(eraser, user) == (False, False)
        # the next user with the id
        assert (await follow(service, user, other)).status_code == 200
        refused = await follow(old_key, user, uid("third"))
        assert refused.status_code == 401, refused.text
        assert (await service.get(f"/v1/users/{user}/counts")).json()["following"] == 1


async def test_nothing_buffered_or_stale_brings_an_erased_id_back(
    make_service: MakeService, service_key: str, uid: UserIds
) -> None:
    """Interactions accepted before the erasure are dropped while the user is still marked
    (never applied to the next user with the id); a dismissal of or by a user being erased is
    refused, and one naming an erased user creates nobody."""
    user, friend, fan = uid("user"), uid("friend"), uid("fan")
    services = make_service(rate_limits_enabled=False)
    now = datetime.now(UTC).isoformat()
    async with process(services, service_key) as (http,):
        for src, dst in ((user, friend), (friend, user), (fan, friend)):
            assert (await follow(http, src, dst)).status_code == 200
        # buffered, not yet flushed: the worker's flusher is behind
        events = [{"actor": friend, "target": user, "kind": "message", "at": now},
                  {"actor": user, "target": friend, "kind": "like", "at": now}]  # fmt: skip
        assert (await http.post("/v1/interactions", json=events)).status_code == 202
        await services.neo4j.moderation.erase_begin(user)  # as DELETE does, before its job
        for src, dst in ((fan, user), (user, fan)):
            refused = await http.delete(f"/v1/users/{src}/suggestions/{dst}")
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"]["code"] == "user_erasing"
        await services.moderation.start_erasure(user)
        await services.jobs.drain()
        assert await state(services, user) == (False, False)
        gone = await http.delete(f"/v1/users/{fan}/suggestions/{user}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_user"
        assert await state(services, user) == (False, False)
        # the next user with the id gets none of the old one's interactions
        assert (await follow(http, user, fan)).status_code == 200
        await services.interaction_flusher.flush_all()
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
    moderation = services.neo4j.moderation
    end = moderation.erase_end
    attempts = 0

    async def raced(*args: object) -> object:
        nonlocal attempts
        attempts += 1
        await services.neo4j.store.driver.execute_query(
            "MATCH (u:User {id: $user}) MERGE (b:User {id: $blocker}) CREATE (b)-[:BLOCKS]->(u)",
            {"user": user, "blocker": uid("blocker")},
        )
        await services.neo4j.suggestions.dismiss(fan, user)
        return await end(*args)

    monkeypatch.setattr(moderation, "erase_end", raced)
    async with process(services, service_key) as (http,):
        for src, dst in ((user, friend), (fan, friend)):
            assert (await follow(http, src, dst)).status_code == 200
        assert (await http.delete(f"/v1/users/{user}")).status_code == 202
        await services.jobs.drain()
    assert await state(services, user) == (False, False)
    assert attempts == 1
