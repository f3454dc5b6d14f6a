"""Relationship queries over the real servers: batch relationships, friends, common following
and followers, familiar followers, not-followed-back lists and celebrities."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load_edges
from graphsvc.wire.schemas import IdPageBody, RelationshipsBody
from tests.support.driver import (
    Driver,
    assert_newest_first,
    full_counts,
    pages,
    refused,
    relationship,
    user_ids,
    walk,
)

UserIds = Callable[[str], str]


# -- batch relationships ------------------------------------------------------------------------


async def test_relationships_in_one_call(driver: Driver, uid: UserIds) -> None:
    me, fan, idol, friend, blocked, blocker, stranger = (
        uid(n) for n in ("me", "fan", "idol", "friend", "blocked", "blocker", "stranger")
    )
    await driver.follows(fan, me)
    await driver.follows(me, idol, friend)
    await driver.follows(friend, me)
    await driver.block(me, blocked)
    await driver.block(blocker, me)
    ghost = uid("never-seen")
    asked = [fan, idol, friend, blocked, blocker, stranger, ghost]
    rel = (await driver.relationships(me, asked)).relationships
    assert list(rel) == asked
    assert rel[fan] == relationship(followed_by=True)
    assert rel[idol] == relationship(following=True)
    assert rel[friend] == relationship(following=True, followed_by=True)
    assert rel[friend].mutual
    assert rel[blocked] == relationship(blocking=True)
    assert rel[blocker] == relationship(blocked_by=True)
    assert rel[stranger] == rel[ghost] == relationship()


async def test_relationships_of_an_unknown_user_are_all_false(driver: Driver, uid: UserIds) -> None:
    ghost, other = uid("ghost"), uid("other")
    body = await driver.relationships(ghost, [other])
    assert body == RelationshipsBody(relationships={other: relationship()})


async def test_relationships_take_100_ids_and_no_more(driver: Driver, uid: UserIds) -> None:
    me = uid("me")
    many = [uid(f"o{n}") for n in range(101)]
    await driver.follows(me, many[99])
    body = await driver.relationships(me, many[:100])
    assert len(body.relationships) == 100
    assert body.relationships[many[99]].following is True
    error = await refused(driver.relationships(me, many), 422, "too_many_ids")
    assert "101" in error.message


@pytest.mark.parametrize("ids", ["", "ok,bad id", "a,,b", "x{y}"])
async def test_relationships_reject_malformed_ids(
    client: httpx.AsyncClient, uid: UserIds, ids: str
) -> None:
    response = await client.get(f"/v1/users/{uid('me')}/relationships", params={"ids": ids})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] in {"invalid_user_id", "too_many_ids"}


async def test_relationships_need_ids(client: httpx.AsyncClient, uid: UserIds) -> None:
    response = await client.get(f"/v1/users/{uid('me')}/relationships")
    assert response.status_code == 422
    assert "ids" in response.json()["error"]["message"]


# -- friends ------------------------------------------------------------------------------------


async def test_friends_are_mutual_follows_newest_first(driver: Driver, uid: UserIds) -> None:
    me = uid("me")
    mutual = [uid(f"m{n}") for n in range(7)]
    one_way = [uid(f"w{n}") for n in range(3)]
    fans = [uid(f"f{n}") for n in range(2)]
    for other in mutual:
        await driver.follows(me, other)
        await driver.follows(other, me)
    await driver.follows(me, *one_way)
    for fan in fans:
        await driver.follows(fan, me)
    items = await walk(driver.friends(me, page_size=3), 3)
    assert user_ids(items) == mutual[::-1]
    assert_newest_first(items)
    assert await driver.counts(me) == full_counts(9, 10, friends=7)
    assert (await driver.counts(mutual[0])).friends == 1

    await driver.unfollow(mutual[3], me)  # no longer mutual
    assert user_ids(await walk(driver.friends(me, page_size=50), 50)) == [
        m for m in mutual[::-1] if m != mutual[3]
    ]
    assert (await driver.counts(me)).friends == 6
    assert (await driver.counts(mutual[3])).friends == 0


async def test_friends_of_unknown_user_are_empty(driver: Driver, uid: UserIds) -> None:
    assert await pages(driver.friends(uid("ghost"))) == [[]]  # one page, the last


# -- common following / followers ----------------------------------------------------------------


async def test_common_following_with_total_and_pages(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    both = sorted(uid(f"both{n}") for n in range(9))
    only_a, only_b = uid("only-a"), uid("only-b")
    await driver.follows(a, *both, only_a)
    await driver.follows(b, *both[::-1], only_b)
    first = await anext(driver.common_following(a, b, page_size=4).pages())
    assert first.total == 9
    assert first.items == both[:4]
    assert await walk(driver.common_following(a, b, page_size=4), 4) == both
    assert await walk(driver.common_following(b, a), 200) == both
    response = await client.get(
        f"/v1/users/{b}/common-following/{a}", params={"cursor": first.next_cursor}
    )  # a cursor is bound to its pair
    assert response.status_code == 400
    ghost = uid("ghost")
    assert await anext(driver.common_following(a, ghost).pages()) == IdPageBody(
        total=0, items=[], next_cursor=None, total_is_lower_bound=False
    )


async def test_common_followers_of_two_users_with_20000_followers_each(
    make_driver: Callable[..., Driver],
    make_service: Callable[..., Services],
    tmp_path: Path,
    remember: Callable[[list[str]], None],
    uid: UserIds,
) -> None:
    """The exact intersection (10,000 users), paged to the end, with the exact total when
    COMMON_SCAN_MAX covers a whole list; past it, a lower bound, and the same walk."""
    prefix = uid("cf") + "."
    lines = []
    for n in range(30_000):
        if n < 20_000:
            lines.append(f"f{n:05d} a {1_700_000_000 + n}\n")
        if n >= 10_000:
            lines.append(f"f{n:05d} b {1_700_000_000 + n}\n")
    # followers of each other's followers do not matter, but make the followers not trivial
    lines += [f"f{n:05d} x{n % 50} 1700000000\n" for n in range(0, 30_000, 7)]
    path = tmp_path / "common.txt"
    path.write_text("".join(lines))
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    service = make_service()
    await load_edges(service, edges, progress=False)
    expected = [f"{prefix}f{n:05d}" for n in range(10_000, 20_000)]
    a, b = prefix + "a", prefix + "b"
    async with make_driver(common_scan_max=20_000) as driver:
        first = await anext(driver.common_followers(a, b).pages())
        assert first.total == 10_000 and not first.total_is_lower_bound
        assert first.items == expected[:200]
        assert await walk(driver.common_followers(a, b), 200) == expected
        reverse = await anext(driver.common_followers(b, a, page_size=5).pages())
        assert reverse.total == 10_000 and reverse.items == expected[:5]
    async with make_driver(common_scan_max=5_000) as driver:
        # each request examines at most 5,000 of a's 20,000 followers: the first 10,000 (by
        # id) follow a only, so the first two pages come back empty with a cursor
        first = await anext(driver.common_followers(a, b).pages())
        assert first.total_is_lower_bound and first.total == 0
        assert first.items == [] and first.next_cursor is not None
        # a bounded read may stop early: short pages, even empty ones, before the end
        walked = await pages(driver.common_followers(a, b))
        assert [user for page in walked for user in page] == expected
        assert all(len(page) <= 200 for page in walked)
        assert len(walked) == 2 + 10_000 // 200


# -- familiar followers -------------------------------------------------------------------------


async def test_familiar_followers(driver: Driver, uid: UserIds) -> None:
    viewer, target = uid("viewer"), uid("target")
    known = [uid(f"k{n}") for n in range(14)]
    await driver.follows(viewer, *known)
    for k in known[::2]:  # 7 of the people viewer follows also follow target
        await driver.follows(k, target)
    strangers = [uid(f"s{n}") for n in range(3)]
    for s in strangers:
        await driver.follows(s, target)
    await driver.follows(viewer, target)  # the viewer itself is not a familiar follower
    body = await driver.familiar_followers(viewer, target, limit=2)
    newest_first = known[::2][::-1]
    assert body == IdPageBody(
        total=7, items=newest_first[:2], next_cursor=None, total_is_lower_bound=False
    )
    full = await driver.familiar_followers(viewer, target, limit=200)
    assert full.items == newest_first
    ghost = uid("ghost")
    assert (await driver.familiar_followers(viewer, ghost)).total == 0
    assert (await driver.familiar_followers(ghost, target)).total == 0


async def test_familiar_followers_of_a_celebrity(
    make_driver: Callable[..., Driver],
    make_service: Callable[..., Services],
    tmp_path: Path,
    remember: Callable[[list[str]], None],
    uid: UserIds,
) -> None:
    prefix = uid("ff") + "."
    lines = [f"fan{n:05d} star 1700000000\n" for n in range(6_000)]
    lines += [f"viewer fan{n:05d} {1_700_000_000 + n}\n" for n in range(0, 6_000, 100)]
    lines += [f"viewer other{n} 1700000000\n" for n in range(40)]
    path = tmp_path / "celeb.txt"
    path.write_text("".join(lines))
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    await load_edges(make_service(), edges, progress=False)
    async with make_driver() as driver:
        body = await driver.familiar_followers(f"{prefix}viewer", f"{prefix}star", limit=3)
        assert body.total == 60
        assert body.items == [f"{prefix}fan{n:05d}" for n in (5900, 5800, 5700)]


# -- not followed back, celebrities ----------------------------------------------------------------


async def test_not_followed_back_and_not_following_back(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    me = uid("me")
    fans = [uid(f"fan{n}") for n in range(12)]
    idols = [uid(f"idol{n}") for n in range(5)]
    async with make_driver(hot_list_cap=4) as driver:  # pages cross the Redis/Neo4j seam
        for fan in fans:
            await driver.follows(fan, me)
        followed_back = fans[1::3]
        await driver.follows(me, *followed_back, *idols)
        items = await walk(driver.followers(me, page_size=3, not_followed_back=True), 3)
        assert user_ids(items) == [f for f in fans[::-1] if f not in followed_back]
        assert_newest_first(items)
        items = await walk(driver.following(me, page_size=2, not_following_back=True), 2)
        assert user_ids(items) == idols[::-1]
        plain = await walk(driver.followers(me, page_size=5), 5)
        assert user_ids(plain) == fans[::-1]


async def test_celebrities_only(make_driver: Callable[..., Driver], uid: UserIds) -> None:
    reader = uid("reader")
    stars = [uid(f"star{n}") for n in range(3)]
    nobody = uid("nobody")
    async with make_driver(celebrity_followers=3) as driver:
        for star in stars:
            for n in range(3):
                await driver.follows(uid(f"fan-{star[-5:]}-{n}"), star)
        await driver.follows(reader, stars[0], nobody, stars[2])
        await driver.follows(uid("fan-late"), stars[1])
        await driver.follows(reader, stars[1])
        items = await walk(driver.following(reader, page_size=2, celebrities_only=True), 2)
        assert user_ids(items) == [stars[1], stars[2], stars[0]]
        counts = await driver.counts(stars[1])
        assert counts.celebrity is True and counts.followers == 5
        assert (await driver.counts(nobody)).celebrity is False
        # both filters: the celebrities the reader follows that do not follow it back
        await driver.follows(stars[2], reader)
        both = driver.following(reader, page_size=1, celebrities_only=True, not_following_back=True)
        assert user_ids(await walk(both, 1)) == [stars[1], stars[0]]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/users/bad id/friends",
        "/v1/users/ok/common-following/bad id",
        "/v1/users/ok/common-followers/{x}",
        "/v1/users/bad id/familiar-followers/ok",
        "/v1/users/ok/friends?limit=0",
        "/v1/users/ok/common-followers/ok2?limit=201",
        "/v1/users/ok/followers?not_followed_back=maybe",
    ],
)
async def test_bad_input_is_422(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"]


async def test_common_followers_of_a_small_and_a_big_user(driver: Driver, uid: UserIds) -> None:
    """Follower counts far apart take the other plan (walk the smaller side): same answer."""
    small, big = uid("small"), uid("big")
    fans = [uid(f"fan{n}") for n in range(3)]
    crowd = [uid(f"crowd{n}") for n in range(60)]
    for fan in fans:
        await driver.follows(fan, small)
    for user in [*crowd, fans[0], fans[2]]:
        await driver.follows(user, big)
    expected = sorted([fans[0], fans[2]])
    for a, b in ((small, big), (big, small)):
        body = await anext(driver.common_followers(a, b, page_size=1).pages())
        assert body.total == 2 and body.items == expected[:1]
        assert await walk(driver.common_followers(a, b, page_size=1), 1) == expected
