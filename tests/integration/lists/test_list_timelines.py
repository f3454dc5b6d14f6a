"""List timelines against the real servers: the posts of a curate list's members, pushed for
ordinary members and pulled for celebrities, merged newest first; members' changes; exclusive
lists leaving the owner's home timeline; every viewer's rights and filters (owner, admin,
stranger, anonymous, member, a follower of the list, a user in a block with a member, a muter,
a user the owner blocks).

Celebrities have TIMELINE_CELEBRITY_FOLLOWERS = 3 followers here (``tests/support/timelines``).
"""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.adapters.redis.timelines import LIST
from tests.support import timelines
from tests.support.driver import AsViewer, Driver, refused
from tests.support.times import at

UserIds = Callable[[str], str]
api = timelines.timeline_driver  # the driver the tests below ask for


async def posts_of(graph: Driver, owner: str, list_id: str, page_size: int = 50) -> list[str]:
    """The list's whole timeline as ``author|post`` strings, newest first, each post once."""
    items = [i async for i in graph.list_timeline(owner, list_id, page_size=page_size)]
    times = [(i.at, i.author, i.post_id) for i in items]
    assert times == sorted(times, reverse=True), "not newest first"
    found = [f"{i.author}|{i.post_id}" for i in items]
    assert len(found) == len(set(found)), f"a post shows twice: {found}"
    return found


async def a_celebrity(graph: Driver, uid: UserIds, name: str) -> str:
    star = uid(name)
    for fan in [uid("fan") for _ in range(3)]:
        await graph.follows(fan, star)
    return star


async def test_members_posts_pushed_and_pulled_merge_newest_first(
    api: Driver, uid: UserIds
) -> None:
    owner, ordinary, outsider = uid("owner"), uid("ordinary"), uid("outsider")
    star = await a_celebrity(api, uid, "star")
    found = await api.create_list(owner, "Reads")
    await api.publish(ordinary, "o1", at(1))  # before the list: the first read rebuilds it
    await api.change_list_members(owner, found.id, add=[ordinary, star])
    assert await posts_of(api, owner, found.id) == [f"{ordinary}|o1"]

    await api.publish(star, "s1", at(2))
    await api.publish(ordinary, "o2", at(3))
    await api.publish(outsider, "x1", at(4))
    await api.settle()
    assert await posts_of(api, owner, found.id) == [
        f"{ordinary}|o2",
        f"{star}|s1",
        f"{ordinary}|o1",
    ]
    # the ordinary member's posts were pushed into the list's timeline; the celebrity's pulled
    stored = await api.services.core.redis.home_timelines.entries(found.id, LIST)
    assert [p.member for p in stored] == [f"{ordinary}|o2", f"{ordinary}|o1"]
    # pages of one post each walk it all, never skipping or repeating
    assert await posts_of(api, owner, found.id, page_size=1) == await posts_of(api, owner, found.id)


async def test_a_members_change_shows_at_once(api: Driver, uid: UserIds) -> None:
    owner, kept, gone, late = uid("owner"), uid("kept"), uid("gone"), uid("late")
    found = await api.create_list(owner, "Reads")
    await api.change_list_members(owner, found.id, add=[kept, gone])
    assert await posts_of(api, owner, found.id) == []  # read: the list is active
    for n, author in enumerate((kept, gone, late)):
        await api.publish(author, f"p{n}", at(n))
    await api.settle()
    assert await posts_of(api, owner, found.id) == [f"{gone}|p1", f"{kept}|p0"]

    await api.change_list_members(owner, found.id, add=[late], remove=[gone])
    # the removed member's posts go, the added one's newest posts are backfilled
    assert await posts_of(api, owner, found.id) == [f"{late}|p2", f"{kept}|p0"]
    await api.delete_post(kept, "p0")
    await api.settle()
    assert await posts_of(api, owner, found.id) == [f"{late}|p2"]
    await api.set_status(late, "suspended")
    assert await posts_of(api, owner, found.id) == []
    await api.set_status(late, "active")
    await api.drain()
    assert await posts_of(api, owner, found.id) == [f"{late}|p2"]


async def test_an_exclusive_lists_members_leave_the_owners_home_timeline(
    api: Driver, uid: UserIds
) -> None:
    owner, listed, other = uid("owner"), uid("listed"), uid("other")
    star = await a_celebrity(api, uid, "star")
    await api.timeline_of(owner)
    await api.follows(owner, listed, other, star)
    await api.publish(listed, "l1", at(1))
    await api.publish(other, "o1", at(2))
    await api.publish(star, "s1", at(3))
    await api.settle()
    everyone = [(star, "s1"), (other, "o1"), (listed, "l1")]
    assert await api.timeline_of(owner) == everyone

    found = await api.create_list(owner, "Apart", exclusive=True)
    assert found.exclusive is True
    await api.change_list_members(owner, found.id, add=[listed, star])
    assert await api.timeline_of(owner) == [(other, "o1")]
    assert await posts_of(api, owner, found.id) == [f"{star}|s1", f"{listed}|l1"]
    # another reader following the same people is untouched
    reader = uid("reader")
    await api.timeline_of(reader)
    await api.follows(reader, listed)
    await api.settle()
    assert await api.timeline_of(reader) == [(listed, "l1")]

    await api.update_list(owner, found.id, exclusive=False)
    assert await api.timeline_of(owner) == everyone
    await api.update_list(owner, found.id, exclusive=True)
    assert await api.timeline_of(owner) == [(other, "o1")]
    await api.delete_list(owner, found.id)
    assert await api.timeline_of(owner) == everyone


async def test_exclusive_is_the_owners_alone_and_curate_only(
    api: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    owner = uid("owner")
    found = await api.create_list(owner, "Apart", exclusive=True)
    async with as_viewer(uid("stranger")) as graph:
        assert (await graph.get_list(owner, found.id)).exclusive is None
    async with as_viewer(owner) as graph:
        assert (await graph.get_list(owner, found.id)).exclusive is True
    await refused(
        api.create_list(owner, "Mods", purpose="moderation", exclusive=True), 422, "invalid_list"
    )
    mods = await api.create_list(owner, "Mods", purpose="moderation")
    await refused(api.update_list(owner, mods.id, exclusive=True), 409, "list_purpose")
    await refused(posts_of(api, owner, mods.id), 409, "list_purpose")
    assert (await api.get_list(owner, mods.id)).exclusive is False


async def test_each_viewer_reads_what_it_may(
    api: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    owner, member, other = uid("owner"), uid("member"), uid("other")
    stranger, blocker, muter, shunned = uid("stranger"), uid("blocker"), uid("muter"), uid("shun")
    public = await api.create_list(owner, "Public")
    private = await api.create_list(owner, "Private", private=True)
    for found in (public, private):
        await api.change_list_members(owner, found.id, add=[member, other])
    await api.publish(member, "m1", at(1))
    await api.publish(other, "o1", at(2))
    await api.block(blocker, member)
    await api.mute(muter, other)
    await api.block(owner, shunned)
    await api.settle()
    both = [f"{other}|o1", f"{member}|m1"]

    async with as_viewer(owner, **timelines.FEED) as graph:
        assert await posts_of(graph, owner, private.id) == both
    assert await posts_of(api, owner, private.id) == both  # an admin key naming no viewer
    for viewer in (None, stranger, member):
        async with as_viewer(viewer, **timelines.FEED) as graph:
            await refused(posts_of(graph, owner, private.id), 404, "list_not_found")
            assert await posts_of(graph, owner, public.id) == both
    async with as_viewer(blocker, **timelines.FEED) as graph:  # a block either way hides
        assert await posts_of(graph, owner, public.id) == [f"{other}|o1"]
    async with as_viewer(member, **timelines.FEED) as graph:
        await api.block(member, stranger)
        assert await posts_of(graph, owner, public.id) == both
    async with as_viewer(stranger, **timelines.FEED) as graph:
        assert await posts_of(graph, owner, public.id) == [f"{other}|o1"]
    async with as_viewer(muter, **timelines.FEED) as graph:
        assert await posts_of(graph, owner, public.id) == [f"{member}|m1"]
    async with as_viewer(shunned, **timelines.FEED) as graph:
        await refused(posts_of(graph, owner, public.id), 404, "list_not_found")
    # the others' filters changed nothing for the owner
    assert await posts_of(api, owner, public.id) == both
    # a follower of the list reads it as anyone may, and loses it with everyone else
    follower = uid("follower")
    await api.follow_list(follower, public.id)
    async with as_viewer(follower, **timelines.FEED) as graph:
        assert await posts_of(graph, owner, public.id) == both
        assert [f.id async for f in graph.followed_lists(follower)] == [public.id]
        await api.update_list(owner, public.id, private=True)
        await refused(posts_of(graph, owner, public.id), 404, "list_not_found")
        assert [f.id async for f in graph.followed_lists(follower)] == []


async def test_erasure_leaves_no_list_timeline_behind(api: Driver, uid: UserIds) -> None:
    owner, member, other = uid("owner"), uid("member"), uid("other")
    found = await api.create_list(owner, "Reads", exclusive=True)
    await api.change_list_members(owner, found.id, add=[member, other])
    await api.timeline_of(owner)  # the owner's exclusions are cached
    assert await posts_of(api, owner, found.id) == []
    await api.publish(member, "m1", at(1))
    await api.publish(other, "o1", at(2))
    await api.settle()
    redis = api.services.core.redis
    lists = redis.home_timelines

    await api.erase(member)
    await api.drain()
    assert [p.member for p in await lists.entries(found.id, LIST)] == [f"{other}|o1"]
    assert await redis.list_holders.of(member) == []
    # the next user with the id starts in no list
    assert await posts_of(api, owner, found.id) == [f"{other}|o1"]

    await api.erase(owner)
    await api.drain()
    keys = [lists.key(kind, found.id) for kind in ("lt", "lr", "lc", "lv", "lb")]
    keys += [redis.mirror.key(kind, owner) for kind in ("xl", "xv")]
    assert await redis.client.exists(*keys) == 0
