"""A user's own list of blocks against the real servers: newest first across signed pages, read
by its owner alone (its bound key, a service key naming it as the viewer, or an admin key that
names no one), and capped at MAX_BLOCKS, also for blocks sent at once from several services."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import VIEWER_HEADER, Scope
from graphsvc.domain.errors import BlockLimit
from graphsvc.domain.model import BlockChange
from graphsvc.wire.schemas import BlockBody, PageBody
from tests.support.driver import (
    Driver,
    assert_error,
    assert_newest_first,
    pages,
    refused,
    relationship,
    user_ids,
    walk,
)

UserIds = Callable[[str], str]
MakeClient = Callable[..., httpx.AsyncClient]


async def test_blocks_newest_first_across_pages(driver: Driver, uid: UserIds) -> None:
    owner, blocker = uid("owner"), uid("blocker")
    blocked = [uid(f"blocked{n}") for n in range(5)]
    for other in blocked:
        await driver.block(owner, other)
    await driver.block(blocker, owner)  # a block of the owner is not the owner's

    items = await walk(driver.blocks(owner, page_size=2), 2)
    assert user_ids(items) == blocked[::-1]
    assert_newest_first(items)
    assert [len(page) for page in await pages(driver.blocks(owner, page_size=2))] == [2, 2, 1]
    assert await driver.ids(blocker, "blocks") == [owner]

    await driver.unblock(owner, blocked[3])
    await driver.block(owner, blocked[0])  # blocked already: its time is kept
    assert await driver.ids(owner, "blocks") == [blocked[4], *blocked[2::-1]]


async def test_inactive_users_are_left_out_as_in_every_list(driver: Driver, uid: UserIds) -> None:
    owner, spammer, other = uid("owner"), uid("spammer"), uid("other")
    await driver.block(owner, spammer)
    await driver.block(owner, other)
    await driver.set_status(spammer, "spam")
    await driver.drain()
    assert await driver.ids(owner, "blocks") == [other]
    assert (await driver.relation(owner, spammer)).blocking  # the block itself stands


async def test_an_unknown_user_blocks_nobody(driver: Driver, uid: UserIds) -> None:
    ghost = uid("ghost")
    assert await pages(driver.blocks(ghost)) == [[]]
    assert_error(await driver.http.get("/v1/users/a b/blocks"), 422, "invalid_user_id")


async def test_a_cursor_is_for_one_users_blocks(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    owner, other = uid("owner"), uid("other")
    for n in range(3):
        await driver.block(owner, uid(f"b{n}"))
        await driver.block(other, uid(f"c{n}"))
    first = PageBody.model_validate(
        (await client.get(f"/v1/users/{owner}/blocks", params={"limit": 1})).json()
    )
    assert first.next_cursor
    elsewhere = await client.get(f"/v1/users/{other}/blocks", params={"cursor": first.next_cursor})
    assert_error(elsewhere, 400, "invalid_cursor")
    followers = await client.get(
        f"/v1/users/{owner}/followers", params={"cursor": first.next_cursor}
    )
    assert_error(followers, 400, "invalid_cursor")


@pytest.fixture
async def keys(backends: Services, uid: UserIds) -> dict[str, str]:
    """The owner (a user with one block) and keys: bound to the owner, bound to someone else,
    a read and write service key, and an admin key."""
    access = backends.access
    owner, someone = uid("owner"), uid("someone")
    read_write = frozenset({Scope.READ, Scope.WRITE})
    return {
        "owner": owner,
        "someone": someone,
        "owner_key": (await access.create(read_write, user=owner, name="blocks")).token,
        "someone_key": (await access.create(read_write, user=someone, name="blocks")).token,
        "service": (await access.create(read_write, name="blocks")).token,
        "admin": (await access.create(frozenset({Scope.ADMIN, Scope.READ}), name="blocks")).token,
    }


async def test_only_the_owner_reads_its_blocks(
    make_client: MakeClient, driver: Driver, keys: dict[str, str], uid: UserIds
) -> None:
    owner, someone, blocked = keys["owner"], keys["someone"], uid("blocked")
    await driver.block(owner, blocked)
    path = f"/v1/users/{owner}/blocks"

    async def read(key: str, viewer: str | None = None) -> httpx.Response:
        headers = {VIEWER_HEADER: viewer} if viewer else {}
        async with make_client(key=keys[key]) as http:
            return await http.get(path, headers=headers)

    for key, viewer in (("owner_key", None), ("service", owner), ("admin", None)):
        answer = await read(key, viewer)
        assert answer.status_code == 200, (key, answer.text)
        assert [item["user_id"] for item in answer.json()["items"]] == [blocked]

    # a key bound to another user reads only its own user's view
    assert_error(await read("someone_key"), 403, "wrong_acting_user")
    # a service key reads as the viewer it names, or anonymously; an admin key naming a viewer
    # reads as that viewer
    for key, viewer in (("service", someone), ("service", None), ("admin", someone)):
        error = assert_error(await read(key, viewer), 403, "owner_only")
        assert owner in error.message and "blocks" in error.message
    # the owner's own key may name itself, and nobody else
    assert (await read("owner_key", owner)).status_code == 200
    assert_error(await read("owner_key", someone), 403, "wrong_acting_user")


async def test_the_cap_refuses_a_new_block_only(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    me, a, b, c = uid("me"), uid("a"), uid("b"), uid("c")
    async with make_driver(max_blocks=2) as graph:
        await graph.follow_pairs((me, c), (c, me))
        await graph.block(me, a)
        await graph.block(me, b)
        error = await refused(graph.block(me, c), 409, "block_limit")
        assert "MAX_BLOCKS" in error.message and me in error.message
        # the refused block changed nothing: the follows both ways stand
        assert await graph.relation(me, c) == relationship(following=True, followed_by=True)
        assert await graph.ids(me, "blocks") == [b, a]
        # a block that exists is never refused, and others may still block the user
        assert await graph.block(me, a) == BlockBody(
            blocking=True, created=False, removed_follows=0
        )
        assert (await graph.block(uid("d"), me)).created

        await graph.unblock(me, b)
        assert await graph.block(me, c) == BlockBody(blocking=True, created=True, removed_follows=2)
        assert await graph.ids(me, "blocks") == [c, a]


async def test_blocks_sent_at_once_from_several_services_stop_at_the_cap(
    make_service: Callable[..., Services], driver: Driver, uid: UserIds
) -> None:
    """Each service locks only within its own process: the cap holds because Neo4j counts the
    blocker's blocks under the blocker's lock."""
    services = [make_service(max_blocks=5) for _ in range(3)]
    me = uid("me")
    targets = [uid(f"t{n}") for n in range(30)]
    answers = await asyncio.gather(
        *(services[n % 3].relations.block(me, t) for n, t in enumerate(targets)),
        return_exceptions=True,
    )
    made = {
        t for t, answer in zip(targets, answers, strict=True) if isinstance(answer, BlockChange)
    }
    refusals = [answer for answer in answers if not isinstance(answer, BlockChange)]
    assert len(made) == 5 and all(isinstance(r, BlockLimit) for r in refusals), answers
    assert set(await driver.ids(me, "blocks")) == made
