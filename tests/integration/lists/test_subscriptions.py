"""Subscriptions to moderation lists and follows of curate lists, against the real servers:
a subscription mutes or blocks every member, kept current as the list changes, with
exceptions; unsubscribing undoes exactly what it did and nothing done by hand; the rules of
who may subscribe or follow; lapses when the list is hidden, deleted or its owner blocks the
subscriber; bounds; erasure leaving nothing behind.

The subscriptions' work runs as a worker's job; ``settle`` claims and finishes it here.
"""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.bootstrap import Services
from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]


async def blocked_by(graph: Driver, user: str) -> set[str]:
    return {b.user_id async for b in graph.blocks(user)}


async def muted_by(graph: Driver, user: str) -> set[str]:
    return {m.user_id async for m in graph.mutes(user)}


async def a_mod_list(graph: Driver, owner: str, members: list[str], **options: object) -> str:
    made = await graph.create_list(owner, "Keep away", purpose="moderation", **options)  # type: ignore[arg-type]
    if members:
        await graph.change_list_members(owner, made.id, add=members)
    return made.id


async def test_a_subscription_blocks_members_and_undoes_only_what_it_did(
    driver: Driver, uid: UserIds
) -> None:
    owner, user = uid("owner"), uid("user")
    a, b, c, d = uid("a"), uid("b"), uid("c"), uid("d")
    await driver.follows(user, a)  # a block ends the follow
    await driver.block(user, b)  # by hand, before
    mods = await a_mod_list(driver, owner, [a, b, c])

    made = await driver.subscribe_list(user, mods, "block")
    assert driver.last_status == 202
    assert (made.state, made.action, made.owner, made.name) == (
        "applying",
        "block",
        owner,
        "Keep away",
    )
    await driver.settle()
    assert await blocked_by(driver, user) == {a, b, c}
    assert not (await driver.relationships(user, [a])).relationships[a].following
    state = await driver.get_list_subscription(user, mods)
    assert (state.state, state.applied, state.refused) == ("applied", 2, 0)  # b is the user's

    # kept current as the list changes
    await driver.change_list_members(owner, mods, add=[d], remove=[a])
    await driver.settle()
    assert await blocked_by(driver, user) == {b, c, d}

    assert (await driver.unsubscribe_list(user, mods)).unsubscribed
    assert driver.last_status == 202
    await driver.settle()
    assert await blocked_by(driver, user) == {b}  # the block made by hand stays
    await refused(driver.get_list_subscription(user, mods), 404, "subscription_not_found")
    assert not (await driver.unsubscribe_list(user, mods)).unsubscribed
    assert driver.last_status == 200


async def test_exceptions_and_what_is_done_or_undone_by_hand(driver: Driver, uid: UserIds) -> None:
    owner, user = uid("owner"), uid("user")
    a, b, c, outsider = uid("a"), uid("b"), uid("c"), uid("outsider")
    mods = await a_mod_list(driver, owner, [a, b, c])
    await driver.subscribe_list(user, mods, "block")
    await driver.settle()

    excepted = await driver.except_list_member(user, mods, c)
    assert (excepted.excepted, excepted.changed) == (True, True)
    await refused(driver.except_list_member(user, mods, outsider), 409, "not_list_member")
    await driver.settle()
    assert await blocked_by(driver, user) == {a, b}
    assert [e async for e in driver.subscription_exceptions(user, mods)] == [c]

    await driver.unblock(user, a)  # undone by hand: the subscription excepts a from now on
    await driver.block(user, b)  # made again by hand: b's block is the user's own now
    await driver.change_list_members(owner, mods, add=[uid("e")])  # the work runs again
    await driver.settle()
    assert a not in await blocked_by(driver, user)
    assert sorted([e async for e in driver.subscription_exceptions(user, mods)]) == sorted([a, c])

    ended = await driver.except_list_member(user, mods, c, excepted=False)
    assert (ended.excepted, ended.changed) == (False, True)
    await driver.settle()
    assert c in await blocked_by(driver, user)
    await driver.unsubscribe_list(user, mods)
    await driver.settle()
    assert await blocked_by(driver, user) == {b}


async def test_two_subscriptions_share_a_block_and_an_action_can_change(
    driver: Driver, uid: UserIds
) -> None:
    owner, other, user, shared, only = uid("owner"), uid("other"), uid("user"), uid("x"), uid("y")
    first = await a_mod_list(driver, owner, [shared, only])
    second = await a_mod_list(driver, other, [shared])
    await driver.subscribe_list(user, first, "block")
    await driver.subscribe_list(user, second, "block")
    await driver.settle()
    assert await blocked_by(driver, user) == {shared, only}
    await driver.unsubscribe_list(user, first)
    await driver.settle()
    assert await blocked_by(driver, user) == {shared}  # the second still wants it

    changed = await driver.subscribe_list(user, second, "mute")  # blocks undone, mutes made
    assert changed.action == "mute"
    await driver.settle()
    assert await blocked_by(driver, user) == set()
    assert await muted_by(driver, user) == {shared}
    await driver.unsubscribe_list(user, second)
    await driver.settle()
    assert await muted_by(driver, user) == set()


async def test_who_may_subscribe_and_when_a_subscription_lapses(
    driver: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    owner, user, member = uid("owner"), uid("user"), uid("member")
    hidden = await a_mod_list(driver, owner, [member], private=True)
    await refused(driver.subscribe_list(user, hidden, "block"), 404, "list_not_found")
    curate = await driver.create_list(owner, "Reads")
    await refused(driver.subscribe_list(user, curate.id, "block"), 409, "list_purpose")
    own = await a_mod_list(driver, user, [member], private=True)  # one's own private list
    await driver.subscribe_list(user, own, "mute")

    public = await a_mod_list(driver, owner, [member])
    await driver.subscribe_list(user, public, "block")
    await driver.settle()
    assert await blocked_by(driver, user) == {member}
    assert await muted_by(driver, user) == {member}
    # another user may not read or act on the user's subscriptions
    async with as_viewer(owner) as graph:
        await refused(graph.get_list_subscription(user, public), 403, "owner_only")

    await driver.update_list(owner, public, private=True)  # hidden: it lapses, undone
    await driver.settle()
    lapsed = await driver.get_list_subscription(user, public)
    assert (lapsed.state, lapsed.owner, lapsed.name) == ("lapsed", None, None)
    assert await blocked_by(driver, user) == set()
    await driver.update_list(owner, public, private=False)
    await driver.settle()
    assert await blocked_by(driver, user) == {member}

    await driver.block(owner, user)  # the owner blocks the subscriber: it lapses
    await driver.settle()
    assert await blocked_by(driver, user) == set()
    await driver.unblock(owner, user)
    await driver.delete_list(user, own)  # a deleted list takes back what it did
    await driver.settle()
    assert await muted_by(driver, user) == set()


async def test_bounds_and_bad_input_change_nothing(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    async with make_driver(list_subscriptions_max=1, list_follows_max=1) as graph:
        owner, user = uid("owner"), uid("user")
        first, second = await a_mod_list(graph, owner, []), await a_mod_list(graph, owner, [])
        await graph.subscribe_list(user, first, "block")
        await refused(graph.subscribe_list(user, second, "block"), 409, "subscription_limit")
        await graph.subscribe_list(user, first, "block")  # a repeat is no new subscription
        reads = [await graph.create_list(owner, f"Reads {n}") for n in range(2)]
        await graph.follow_list(user, reads[0].id)
        await refused(graph.follow_list(user, reads[1].id), 409, "list_follow_limit")
        bad = await graph.http.put(
            f"/v1/users/{user}/list-subscriptions/{second}", json={"action": "x"}
        )
        assert bad.status_code == 422 and "action" in bad.text
        assert [s.list_id async for s in graph.list_subscriptions(user)] == [first]
        assert [f.id async for f in graph.followed_lists(user)] == [reads[0].id]


async def test_a_curate_list_is_followed_by_those_who_may_see_it(
    driver: Driver, uid: UserIds
) -> None:
    owner, user, member = uid("owner"), uid("user"), uid("member")
    reads = await driver.create_list(owner, "Reads")
    await driver.change_list_members(owner, reads.id, add=[member])
    hidden = await driver.create_list(owner, "Hidden", private=True)
    mods = await a_mod_list(driver, owner, [])
    await refused(driver.follow_list(user, hidden.id), 404, "list_not_found")
    await refused(driver.follow_list(user, mods), 409, "list_purpose")

    assert (await driver.follow_list(user, reads.id)).changed
    assert not (await driver.follow_list(user, reads.id)).changed
    followed = [f async for f in driver.followed_lists(user)]
    assert [(f.id, f.members) for f in followed] == [(reads.id, 1)]
    assert followed[0].followed_at >= followed[0].created_at

    await driver.update_list(owner, reads.id, private=True)  # hidden from its followers
    assert [f.id async for f in driver.followed_lists(user)] == []
    await driver.update_list(owner, reads.id, private=False)
    assert [f.id async for f in driver.followed_lists(user)] == [reads.id]
    await driver.block(owner, user)  # a block ends the follow for good
    await driver.settle()
    await driver.unblock(owner, user)
    assert [f.id async for f in driver.followed_lists(user)] == []
    await driver.follow_list(user, reads.id)
    assert not (await driver.unfollow_list(user, uid("x") and reads.id)).following


async def test_erasure_leaves_no_subscription_or_follow_behind(
    driver: Driver, service: Services, uid: UserIds
) -> None:
    owner, user, member = uid("owner"), uid("user"), uid("member")
    mods = await a_mod_list(driver, owner, [member])
    reads = await driver.create_list(owner, "Reads")
    await driver.subscribe_list(user, mods, "block")
    await driver.follow_list(user, reads.id)
    await driver.settle()
    await driver.erase(user)
    await driver.drain()
    rows, _, _ = await service.core.neo4j.store.driver.execute_query(
        "MATCH (s:Subscription {user: $user}) RETURN count(s) AS n", {"user": user}
    )
    assert rows[0]["n"] == 0

    other = uid("other")  # the owner's erasure lifts what others' subscriptions did
    await driver.subscribe_list(other, mods, "block")
    await driver.settle()
    assert await blocked_by(driver, other) == {member}
    await driver.erase(owner)
    await driver.drain()
    await driver.settle()
    assert await blocked_by(driver, other) == set()
    rows, _, _ = await service.core.neo4j.store.driver.execute_query(
        "MATCH (s:Subscription {user: $user}) RETURN count(s) AS n", {"user": other}
    )
    assert rows[0]["n"] == 0
