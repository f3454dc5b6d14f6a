"""Changes of a user's lists against the real servers: every follow and unfollow, in order, with
the cause each viewer may know, through unfollows, removals and blocks; paged, polled with a
cursor, bounded by the retention and the settle line, and read as the lists are (hidden lists
refused, inactive and erased users left out)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta

import pytest

from graphsvc.bootstrap import Services
from graphsvc.wire.schemas import ChangeItem
from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
Seen = list[tuple[str, str, str | None]]
Reader = Callable[..., AbstractAsyncContextManager[Driver]]


@pytest.fixture
def reader(make_driver: MakeDriver, as_viewer: AsViewer) -> Reader:
    """A driver that lists changes up to now (no settle line), read for ``viewer`` by the
    product's key (None: the suite's key, which sees everything)."""

    def open_as(viewer: str | None, **overrides: object) -> AbstractAsyncContextManager[Driver]:
        options: dict[str, object] = {"changes_settle_seconds": 0, **overrides}
        return make_driver(**options) if viewer is None else as_viewer(viewer, **options)

    return open_as


async def _changes(graph: Driver, user_id: str, side: str = "followers", **options: object) -> Seen:
    items: list[ChangeItem] = [
        item
        async for item in graph.changes_since(user_id, side, **options)  # type: ignore[arg-type]
    ]
    assert [i.at for i in items] == sorted(i.at for i in items)
    return [(i.user_id, i.op, i.cause) for i in items]


async def test_every_follow_and_unfollow_in_order_with_its_cause(
    driver: Driver, reader: Reader, uid: UserIds
) -> None:
    owner, leaver, removed, blocker, blocked = (
        uid("owner"), uid("leaver"), uid("removed"), uid("blocker"), uid("blocked")
    )  # fmt: skip
    await driver.follow(leaver, owner)
    await driver.follow(removed, owner)
    await driver.follow(blocker, owner)
    await driver.follow(owner, blocker)
    await driver.follow(blocked, owner)
    await driver.unfollow(leaver, owner)
    await driver.remove_follower(owner, removed)
    await driver.block(blocker, owner)  # ends both follows between them
    await driver.block(owner, blocked)
    await driver.follow(leaver, owner)  # again: a new follow after its end

    everything = [
        (leaver, "follow", None),
        (removed, "follow", None),
        (blocker, "follow", None),
        (blocked, "follow", None),
        (leaver, "unfollow", "unfollow"),
        (removed, "unfollow", "removed"),
        (blocker, "unfollow", "block"),
        (blocked, "unfollow", "block"),
        (leaver, "follow", None),
    ]
    async with reader(None) as admin:
        assert await _changes(admin, owner) == everything
        assert await _changes(admin, owner, "following") == [
            (blocker, "follow", None),
            (blocker, "unfollow", "block"),
        ]
    async with reader(owner) as graph:
        # the owner ended two of them; the blocker's block looks as the blocker's unfollow
        assert await _changes(graph, owner) == [
            *everything[:6],
            (blocker, "unfollow", "unfollow"),
            *everything[7:],
        ]
        # its own follow, ended by the other's block: the cause is not the owner's to know
        assert (await _changes(graph, owner, "following"))[1] == (blocker, "unfollow", None)
    async with reader(removed) as graph:
        # a removed follower is not told it was removed
        assert (removed, "unfollow", None) in await _changes(graph, owner)
    async with reader(uid("stranger")) as graph:
        assert {cause for _, _, cause in await _changes(graph, owner)} == {None}


async def test_pages_and_a_poll_see_each_change_once(
    driver: Driver, reader: Reader, uid: UserIds
) -> None:
    owner = uid("owner")
    fans = [uid(f"fan{n}") for n in range(5)]
    for fan in fans:
        await driver.follow(fan, owner)
    async with reader(None) as graph:
        first = await graph.changes(owner, page_size=2)
        assert [i.user_id for i in first.items] == fans[:2] and first.more
        second = await graph.changes(owner, cursor=first.next_cursor, page_size=2)
        rest = await graph.changes(owner, cursor=second.next_cursor, page_size=2)
        assert [i.user_id for i in second.items + rest.items] == fans[2:]
        assert not rest.more
        idle = await graph.changes(owner, cursor=rest.next_cursor)
        assert idle.items == [] and not idle.more
        await driver.unfollow(fans[0], owner)
        polled = await graph.changes(owner, cursor=idle.next_cursor)
        assert [(i.user_id, i.op) for i in polled.items] == [(fans[0], "unfollow")]
        # since: the changes at or after a moment (here, the first unfollow's)
        since = polled.items[0].at
        assert await _changes(graph, owner, since=since) == [(fans[0], "unfollow", "unfollow")]


async def test_the_settle_line_holds_back_what_may_still_commit(
    driver: Driver, reader: Reader, uid: UserIds
) -> None:
    owner, fan = uid("owner"), uid("fan")
    await driver.follow(fan, owner)
    async with reader(None, changes_settle_seconds=600) as graph:
        page = await graph.changes(owner)
        assert page.items == [] and not page.more
    async with reader(None) as graph:
        assert await _changes(graph, owner) == [(fan, "follow", None)]


async def test_bad_bounds_are_refused(driver: Driver, uid: UserIds) -> None:
    owner = uid("owner")
    long_ago = datetime.now(UTC) - timedelta(days=91)
    await refused(driver.changes(owner, since=long_ago), 400, "since_too_old")
    page = await driver.changes(owner)
    call = driver.http.get(
        f"/v1/users/{owner}/followers/changes",
        params={"since": datetime.now(UTC).isoformat(), "cursor": page.next_cursor},
    )
    assert (await call).status_code == 400
    other = await driver.changes(uid("other"))
    await refused(driver.changes(owner, cursor=other.next_cursor), 400, "invalid_cursor")
    bad = await driver.http.get(f"/v1/users/{owner}/following/changes", params={"since": "soon"})
    assert bad.status_code == 422 and "since" in bad.text


async def test_read_as_the_list_is_hidden_inactive_and_erased_users_left_out(
    driver: Driver, reader: Reader, uid: UserIds
) -> None:
    owner, spammer, gone, fan = uid("owner"), uid("spammer"), uid("gone"), uid("fan")
    for follower in (spammer, gone, fan):
        await driver.follow(follower, owner)
    await driver.unfollow(gone, owner)
    await driver.set_status(spammer, "spam")
    await driver.erase(gone)
    await driver.drain()
    async with reader(None) as graph:
        assert await _changes(graph, owner) == [(fan, "follow", None)]
    await driver.set_privacy(owner, followers_visibility="private")
    async with reader(uid("stranger")) as graph:
        await refused(graph.changes(owner), 403, "network_hidden")
        assert await _changes(graph, owner, "following") == []
    async with reader(owner) as graph:
        assert await _changes(graph, owner) == [(fan, "follow", None)]


async def test_the_sweep_forgets_ended_follows_past_the_retention(
    driver: Driver, backends: Services, reader: Reader, uid: UserIds
) -> None:
    owner, fan = uid("owner"), uid("fan")
    await driver.follow(fan, owner)
    await driver.unfollow(fan, owner)
    store = backends.core.neo4j.changes
    # what a sweep a retention from now would forget: everything ended before now
    while await store.expire(time.time_ns() // 1000 + 1, 10_000):
        pass
    async with reader(None) as graph:
        assert await _changes(graph, owner) == []  # the follow went with its end
