"""A user's own list of blocks against the real servers: newest first across signed pages, and
read by its owner alone (its bound key, a service key naming it as the viewer, or an admin key
that names no one)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from driver import Driver, assert_error, assert_newest_first, pages, user_ids, walk

from graphsvc.bootstrap import Services
from graphsvc.domain.access import VIEWER_HEADER, Scope
from graphsvc.schemas import PageBody

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
