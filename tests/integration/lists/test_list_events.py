"""A public list's changes on the event stream, once each, and none of a private list's (the
stream is public); the members a block took out of a public list; and a lost append delivered
by the relay from the outbox."""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.bootstrap import Services
from tests.support.driver import Driver, eventually
from tests.support.events import events_after

UserIds = Callable[[str], str]


def list_events(events: list[dict]) -> list[tuple[str, str, str]]:
    return [(e["type"], e["dst"], e["list"]) for e in events if "list" in e]


async def test_a_public_lists_changes_are_events_and_a_private_lists_are_not(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    owner, a, b = uid("owner"), uid("a"), uid("b")
    start = await service.core.redis.stream.last_id()
    public = await driver.create_list(owner, "Reads")
    await driver.change_list_members(owner, public.id, add=[a, b])
    await driver.change_list_members(owner, public.id, add=[a])  # nothing changes: no event
    await driver.change_list_members(owner, public.id, remove=[b])
    await driver.update_list(owner, public.id, name="Good reads")
    await driver.update_list(owner, public.id, private=True)
    await driver.change_list_members(owner, public.id, add=[b])  # private now: no event
    await driver.update_list(owner, public.id, private=False)
    hidden = await driver.create_list(owner, "Secret", private=True)
    await driver.change_list_members(owner, hidden.id, add=[a])
    await driver.delete_list(owner, hidden.id)
    await driver.block(owner, a)

    async def a_left() -> bool:  # the list consumer (here, or a worker's) took a out
        await driver.settle()
        events = list_events(await events_after(service, start, {owner}))
        return ("list_member_removed", a, public.id) in events

    await eventually(a_left)
    await driver.delete_list(owner, public.id)

    events = await events_after(service, start, {owner})
    assert all(e["src"] == owner for e in events if "list" in e)
    assert list_events(events) == [
        ("list_created", "", public.id),
        ("list_member_added", a, public.id),
        ("list_member_added", b, public.id),
        ("list_member_removed", b, public.id),
        ("list_changed", "", public.id),
        ("list_hidden", "", public.id),
        ("list_shown", "", public.id),
        ("list_member_removed", a, public.id),
        ("list_deleted", "", public.id),
    ]
    listed = [e for e in events if "list" in e]
    assert len({e["id"] for e in listed}) == len(listed)


async def test_the_relay_appends_a_list_event_whose_append_was_lost(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    owner = uid("owner")
    start = await service.core.redis.stream.last_id()
    lost = driver.services.core.redis.stream
    appended = lost.append

    async def dropped(events: object) -> None:  # Redis took nothing
        return None

    lost.append = dropped  # type: ignore[method-assign]
    try:
        made = await driver.create_list(owner, "Reads")
    finally:
        lost.append = appended  # type: ignore[method-assign]
    assert list_events(await events_after(service, start, {owner})) == []
    await driver.services.background.relay.once(grace=0)
    assert list_events(await events_after(service, start, {owner})) == [
        ("list_created", "", made.id)
    ]
