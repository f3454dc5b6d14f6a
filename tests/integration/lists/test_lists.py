"""Curated lists against the real servers, through the API: an owner's changes, members paged
newest first, every privacy rule for every kind of viewer, blocks and suspensions acting on
lists, the bounds (each refusal changing nothing), and erasure leaving nothing behind.

Viewers: the owner (a service key naming it), an admin key naming no viewer (``driver``), a
member and a stranger (a service key naming them), anonymous (a service key naming no one),
and a user the owner blocks. A refused read answers exactly what an unknown list answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx

from graphsvc.bootstrap import Services
from graphsvc.client import NotFound
from graphsvc.domain.access import Scope
from tests.support.driver import Driver, assert_error, refused
from tests.support.helpers import bearer

UserIds = Callable[[str], str]
UNKNOWN = "0" * 20  # a well-formed list id no list has


async def members_of(graph: Driver, owner: str, list_id: str, page_size: int = 200) -> list[str]:
    return [m.user_id async for m in graph.list_members(owner, list_id, page_size=page_size)]


async def lists_of(graph: Driver, owner: str, **options: object) -> list[str]:
    return [found.id async for found in graph.lists(owner, **options)]  # type: ignore[arg-type]


async def test_an_owner_creates_renames_describes_and_deletes(driver: Driver, uid: UserIds) -> None:
    owner = uid("owner")
    made = await driver.create_list(owner, "  Graph people ", description="who writes")
    assert driver.last_status == 201
    assert (made.owner, made.name, made.description) == (owner, "Graph people", "who writes")
    assert (made.private, made.purpose, made.members) == (False, "curate", 0)
    assert made.created_at == made.updated_at
    assert await driver.get_list(owner, made.id) == made

    renamed = await driver.update_list(owner, made.id, name="Graph folk", private=True)
    assert (renamed.name, renamed.description, renamed.private) == (
        "Graph folk",
        "who writes",
        True,
    )
    assert renamed.updated_at > made.updated_at and renamed.created_at == made.created_at
    described = await driver.update_list(owner, made.id, description="")
    assert (described.name, described.description) == ("Graph folk", "")

    other = await driver.create_list(owner, "Mods", purpose="moderation")
    assert await lists_of(driver, owner) == [other.id, made.id]  # newest first

    assert (await driver.delete_list(owner, made.id)).deleted
    assert not (await driver.delete_list(owner, made.id)).deleted  # idempotent
    await refused(driver.get_list(owner, made.id), 404, "list_not_found")
    assert await lists_of(driver, owner) == [other.id]
    await refused(driver.update_list(owner, made.id, name="x"), 404, "list_not_found")
    await refused(driver.change_list_members(owner, made.id, add=["x"]), 404, "list_not_found")


async def test_members_are_added_and_removed_in_batches_newest_first(
    driver: Driver, uid: UserIds
) -> None:
    owner = uid("owner")
    people = [uid(f"p{n}") for n in range(7)]
    made = await driver.create_list(owner, "Reads")
    first = await driver.change_list_members(owner, made.id, add=people[:4])
    assert (sorted(first.added), first.removed, first.refused, first.members) == (
        sorted(people[:4]),
        [],
        [],
        4,
    )
    stamped = (await driver.get_list(owner, made.id)).updated_at
    nothing = await driver.change_list_members(owner, made.id, add=[people[0]], remove=[uid("n")])
    assert (nothing.added, nothing.removed) == ([], [])
    assert (await driver.get_list(owner, made.id)).updated_at == stamped  # no change, no tick
    later = await driver.change_list_members(owner, made.id, add=[*people[4:], people[0]])
    assert sorted(later.added) == sorted(people[4:]) and later.members == 7  # p0 was in already
    walked = await members_of(driver, owner, made.id, page_size=3)
    # newest batch first; within a batch (one moment) by id, descending
    assert walked == sorted(people[4:], reverse=True) + sorted(people[:4], reverse=True)
    pages = [page async for page in driver.list_members(owner, made.id, page_size=3).pages()]
    assert [len(p.items) for p in pages] == [3, 3, 1]

    change = await driver.change_list_members(owner, made.id, remove=[people[1], uid("never")])
    assert (change.added, change.removed, change.members) == ([], [people[1]], 6)
    assert people[1] not in await members_of(driver, owner, made.id)
    assert (await driver.get_list(owner, made.id)).members == 6
    assert await lists_of(driver, owner, member=people[2]) == [made.id]
    assert await lists_of(driver, owner, member=people[1]) == []


async def test_every_viewer_sees_only_what_the_owner_allows(
    driver: Driver, as_viewer: Callable, uid: UserIds
) -> None:
    owner, member, stranger = uid("owner"), uid("member"), uid("stranger")
    public = await driver.create_list(owner, "Public")
    private = await driver.create_list(owner, "Private", private=True)
    for found in (public, private):
        await driver.change_list_members(owner, found.id, add=[member])

    async with as_viewer(owner) as graph:  # the owner: everything
        assert await lists_of(graph, owner) == [private.id, public.id]
        assert await lists_of(graph, owner, member=member) == [private.id, public.id]
        assert await members_of(graph, owner, private.id) == [member]
        assert (await graph.get_list(owner, private.id)).members == 1
    # an admin key naming no viewer: everything
    assert await lists_of(driver, owner) == [private.id, public.id]
    assert await members_of(driver, owner, private.id) == [member]

    for viewer in (member, stranger, None):  # a member, a stranger, anonymous
        async with as_viewer(viewer) as graph:
            assert await lists_of(graph, owner) == [public.id], viewer
            assert await lists_of(graph, owner, member=member) == [public.id], viewer
            assert await members_of(graph, owner, public.id) == [member]
            assert (await graph.get_list(owner, public.id)).members == 1
            hidden = await refused(graph.get_list(owner, private.id), 404, "list_not_found")
            unknown = await refused(graph.get_list(owner, UNKNOWN), 404, "list_not_found")
            # a hidden list answers what an unknown one does, but for its id
            assert hidden.message.replace(private.id, UNKNOWN) == unknown.message
            await refused(graph.list_members(owner, private.id).pages().__anext__(), 404,
                          "list_not_found")  # fmt: skip


async def test_a_blocked_viewer_and_a_suspended_owner_hide_public_lists(
    driver: Driver, as_viewer: Callable, uid: UserIds
) -> None:
    owner, blocked, stranger = uid("owner"), uid("blocked"), uid("stranger")
    public = await driver.create_list(owner, "Public")
    await driver.block(owner, blocked)
    async with as_viewer(blocked) as graph:
        await refused(graph.get_list(owner, public.id), 404, "list_not_found")
        assert await lists_of(graph, owner) == []
    # the members' read checks the rule itself too (a block made after the list's check)
    store = driver.services.core.neo4j.lists
    assert await store.members_page(owner, public.id, everything=False, viewer=blocked,
                                    after=None, limit=10) == []  # fmt: skip
    async with as_viewer(stranger) as graph:
        assert await lists_of(graph, owner) == [public.id]

    await driver.set_status(owner, "suspended")
    await driver.drain()
    async with as_viewer(stranger) as graph:
        await refused(graph.get_list(owner, public.id), 404, "list_not_found")
        assert await lists_of(graph, owner) == []
    async with as_viewer(owner) as graph:  # the owner still sees its own
        assert await lists_of(graph, owner) == [public.id]
    await driver.set_status(owner, "active")
    await driver.drain()
    async with as_viewer(stranger) as graph:
        assert await lists_of(graph, owner) == [public.id]


async def test_a_suspended_member_is_left_out_until_active_again(
    driver: Driver, uid: UserIds
) -> None:
    owner, member, other = uid("owner"), uid("member"), uid("other")
    made = await driver.create_list(owner, "Reads")
    await driver.change_list_members(owner, made.id, add=[member, other])
    await driver.set_status(member, "spam")
    await driver.drain()
    assert member not in await members_of(driver, owner, made.id)
    assert (await driver.get_list(owner, made.id)).members == 1
    assert await lists_of(driver, owner, member=member) == []
    await driver.set_status(member, "active")
    await driver.drain()
    assert member in await members_of(driver, owner, made.id)
    assert (await driver.get_list(owner, made.id)).members == 2


async def test_a_block_either_way_takes_members_out_of_curate_lists_only(
    driver: Driver, uid: UserIds
) -> None:
    owner, blocked, blocker, kept = uid("owner"), uid("blocked"), uid("blocker"), uid("kept")
    curate = await driver.create_list(owner, "Reads")
    moderation = await driver.create_list(owner, "Keep away", purpose="moderation")
    for found in (curate, moderation):
        await driver.change_list_members(owner, found.id, add=[blocked, blocker, kept])
    await driver.block(owner, blocked)
    await driver.block(blocker, owner)
    # hidden at once, before the list consumer took them out
    assert await members_of(driver, owner, curate.id) == [kept]
    assert sorted(await members_of(driver, owner, moderation.id)) == sorted(
        [blocked, blocker, kept]
    )
    again = await driver.change_list_members(owner, curate.id, add=[blocked, blocker])
    assert again.added == [] and again.members == 1
    assert sorted((r.user_id, r.reason) for r in again.refused) == sorted(
        [(blocked, "blocked"), (blocker, "blocked")]
    )
    assert await lists_of(driver, owner, member=blocked) == [moderation.id]
    assert (await driver.get_list(owner, curate.id)).members == 1
    await driver.settle()
    # an unblock does not bring them back: a reader of the list cannot tell there was a block
    await driver.unblock(owner, blocked)
    await driver.unblock(blocker, owner)
    assert await members_of(driver, owner, curate.id) == [kept]
    assert (await driver.get_list(owner, curate.id)).members == 1
    assert sorted(await members_of(driver, owner, moderation.id)) == sorted(
        [blocked, blocker, kept]
    )
    # a late block event (its block gone) takes no one out who was added again
    readded = await driver.change_list_members(owner, curate.id, add=[blocked])
    assert readded.added == [blocked]
    await driver.services.core.neo4j.lists.leave_blocked([(owner, blocked)])
    assert sorted(await members_of(driver, owner, curate.id)) == sorted([blocked, kept])


async def test_each_bound_refuses_and_changes_nothing(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    owner = uid("owner")
    bounds = {
        "list_owner_max": 2,
        "list_members_max": 3,
        "list_name_max": 5,
        "list_description_max": 4,
        "list_batch_max": 4,
    }
    async with make_driver(**bounds) as graph:
        made = await graph.create_list(owner, "a")
        await graph.create_list(owner, "b")
        error = await refused(graph.create_list(owner, "c"), 409, "list_limit")
        assert "LIST_OWNER_MAX" in error.message
        assert len(await lists_of(graph, owner)) == 2

        await graph.change_list_members(owner, made.id, add=[uid("m1"), uid("m2")])
        before = await graph.get_list(owner, made.id)
        error = await refused(
            graph.change_list_members(owner, made.id, add=[uid("m3"), uid("m4")]),
            409,
            "list_member_limit",
        )
        assert "LIST_MEMBERS_MAX" in error.message
        assert len(await members_of(graph, owner, made.id)) == 2
        await refused(graph.change_list_members(owner, made.id, add=[uid(f"x{n}") for n in range(5)]),
                      422, "too_many_ids")  # fmt: skip
        await refused(graph.update_list(owner, made.id, name="sixsix"), 409, "list_text_too_long")
        await refused(graph.update_list(owner, made.id, description="fives"), 409,
                      "list_text_too_long")  # fmt: skip
        await refused(graph.update_list(owner, made.id, name="  "), 422, "invalid_list")
        await refused(graph.update_list(owner, made.id), 422, "invalid_list")
        same = uid("same")
        await refused(graph.change_list_members(owner, made.id, add=[same], remove=[same]), 422,
                      "invalid_list")  # fmt: skip
        await refused(graph.change_list_members(owner, made.id), 422, "invalid_list")
        padded = [uid("p")] * 5  # counted as sent
        await refused(graph.change_list_members(owner, made.id, add=padded), 422, "too_many_ids")
        assert await graph.get_list(owner, made.id) == before  # refusals moved nothing

        http = graph.http
        assert_error(await http.get(f"/v1/users/{owner}/lists/not-a-list"), 422, "invalid_list")
        bad = await http.post(f"/v1/users/{owner}/lists", json={"name": "ok", "purpose": "fun"})
        assert_error(bad, 422, "invalid_request")
        assert len(await lists_of(graph, owner)) == 2


async def test_a_list_over_a_lowered_bound_can_still_shrink(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    owner = uid("owner")
    people = [uid(f"p{n}") for n in range(4)]
    async with make_driver() as graph:
        made = await graph.create_list(owner, "Big")
        await graph.change_list_members(owner, made.id, add=people)
    async with make_driver(list_members_max=2) as graph:
        shrunk = await graph.change_list_members(owner, made.id, remove=[people[0]])
        assert shrunk.removed == [people[0]] and shrunk.members == 3
        await refused(graph.change_list_members(owner, made.id, add=[uid("q")]), 409,
                      "list_member_limit")  # fmt: skip


async def test_concurrent_changes_never_pass_the_member_bound(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    owner = uid("owner")
    async with make_driver(list_members_max=5) as graph:
        made = await graph.create_list(owner, "Race")
        batches = [[uid(f"r{n}a"), uid(f"r{n}b")] for n in range(6)]
        outcomes = await asyncio.gather(
            *(graph.change_list_members(owner, made.id, add=b) for b in batches),
            return_exceptions=True,
        )
        accepted = [o for o in outcomes if not isinstance(o, BaseException)]
        refusals = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(accepted) == 2 and len(refusals) == 4  # two batches of two fit in five
        assert all(getattr(r, "code", None) == "list_member_limit" for r in refusals)
        assert len(await members_of(graph, owner, made.id)) == 4


async def test_only_the_owner_changes_its_lists(
    driver: Driver, make_client: Callable[..., httpx.AsyncClient], service: Services, uid: UserIds
) -> None:
    owner, intruder = uid("owner"), uid("intruder")
    made = await driver.create_list(owner, "Mine")
    key = (await service.access.create(frozenset({Scope.READ, Scope.WRITE}), user=intruder,
                                       name="t")).token  # fmt: skip
    base = f"/v1/users/{owner}/lists"
    async with make_client(key=None) as http:
        as_intruder = bearer(key)
        for method, path, body in (
            ("POST", base, {"name": "x"}),
            ("PATCH", f"{base}/{made.id}", {"name": "x"}),
            ("DELETE", f"{base}/{made.id}", None),
            ("POST", f"{base}/{made.id}/members", {"add": [intruder]}),
        ):
            answer = await http.request(method, path, json=body, headers=as_intruder)
            assert answer.status_code == 403, (method, path, answer.text)
    assert await driver.get_list(owner, made.id) == made  # unchanged


async def test_erasure_leaves_no_list_and_no_membership_behind(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    owner, member, other = uid("owner"), uid("member"), uid("other")
    kept = await driver.create_list(other, "Others")
    await driver.change_list_members(other, kept.id, add=[owner, member])
    made = await driver.create_list(owner, "Reads")
    await driver.change_list_members(owner, made.id, add=[member])

    await driver.erase(member)
    await driver.drain()
    assert await members_of(driver, other, kept.id) == [owner]
    assert await members_of(driver, owner, made.id) == []

    await driver.erase(owner)
    await driver.drain()
    assert await members_of(driver, other, kept.id) == []
    try:
        await driver.get_list(owner, made.id)
        raise AssertionError("an erased owner's list is still answered")
    except NotFound:
        pass
    rows = await service.core.neo4j.store.read(
        "lists/get", {"owner": owner, "id": made.id, "viewer": "", "count": True}
    )
    assert rows == []
    left = await service.core.neo4j.store.driver.execute_query(
        "MATCH (l:List) WHERE l.owner = $owner OR l.id = $id RETURN count(l) AS n",
        {"owner": owner, "id": made.id},
    )
    assert left.records[0]["n"] == 0
