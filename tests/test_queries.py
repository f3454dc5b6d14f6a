"""Relationship queries over the real servers: batch relationships, friends, common following
and followers, familiar followers, not-followed-back lists and celebrities."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from helpers import assert_newest_first, full_counts, walk

from graphsvc.bootstrap import Services
from graphsvc.ops.edge_files import read_edge_file
from graphsvc.ops.loader import load_edges

UserIds = Callable[[str], str]


async def put(client: httpx.AsyncClient, path: str) -> None:
    response = await client.put(path)
    assert response.status_code == 200, response.text


async def follow(client: httpx.AsyncClient, a: str, *targets: str) -> None:
    for b in targets:
        await put(client, f"/v1/users/{a}/following/{b}")


async def get(client: httpx.AsyncClient, path: str, **params: object) -> dict:
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def user_ids(items: list) -> list[str]:
    return [i["user_id"] if isinstance(i, dict) else i for i in items]


async def walk_ids(client: httpx.AsyncClient, path: str, limit: int) -> tuple[list[str], int]:
    """Every id of an id-ordered list, following next_cursor through short pages too (a
    bounded read may stop early); and how many pages that took."""
    ids: list[str] = []
    cursor, pages = None, 0
    while True:
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        body = await get(client, path, **params)
        pages += 1
        assert len(body["items"]) <= limit
        ids += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            return ids, pages


# -- batch relationships ------------------------------------------------------------------------


async def test_relationships_in_one_call(client: httpx.AsyncClient, uid: UserIds) -> None:
    me, fan, idol, friend, blocked, blocker, stranger = (
        uid(n) for n in ("me", "fan", "idol", "friend", "blocked", "blocker", "stranger")
    )
    await follow(client, fan, me)
    await follow(client, me, idol, friend)
    await follow(client, friend, me)
    await put(client, f"/v1/users/{me}/blocks/{blocked}")
    await put(client, f"/v1/users/{blocker}/blocks/{me}")
    ghost = uid("never-seen")
    asked = [fan, idol, friend, blocked, blocker, stranger, ghost]
    body = await get(client, f"/v1/users/{me}/relationships", ids=",".join(asked))
    rel = body["relationships"]
    assert list(rel) == asked
    no = {"following": False, "followed_by": False, "mutual": False}
    unblocked = {"blocking": False, "blocked_by": False}
    assert rel[fan] == no | unblocked | {"followed_by": True}
    assert rel[idol] == no | unblocked | {"following": True}
    assert rel[friend] == unblocked | {"following": True, "followed_by": True, "mutual": True}
    assert rel[blocked] == no | {"blocking": True, "blocked_by": False}
    assert rel[blocker] == no | {"blocking": False, "blocked_by": True}
    assert rel[stranger] == rel[ghost] == no | unblocked


async def test_relationships_of_an_unknown_user_are_all_false(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    ghost, other = uid("ghost"), uid("other")
    body = await get(client, f"/v1/users/{ghost}/relationships", ids=other)
    assert body == {
        "relationships": {
            other: {
                "following": False,
                "followed_by": False,
                "mutual": False,
                "blocking": False,
                "blocked_by": False,
            }
        }
    }


async def test_relationships_take_100_ids_and_no_more(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    me = uid("me")
    many = [uid(f"o{n}") for n in range(101)]
    await follow(client, me, many[99])
    body = await get(client, f"/v1/users/{me}/relationships", ids=",".join(many[:100]))
    assert len(body["relationships"]) == 100
    assert body["relationships"][many[99]]["following"] is True
    response = await client.get(f"/v1/users/{me}/relationships", params={"ids": ",".join(many)})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_many_ids"
    assert "101" in response.json()["error"]["message"]


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


async def test_friends_are_mutual_follows_newest_first(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    me = uid("me")
    mutual = [uid(f"m{n}") for n in range(7)]
    one_way = [uid(f"w{n}") for n in range(3)]
    fans = [uid(f"f{n}") for n in range(2)]
    for other in mutual:
        await follow(client, me, other)
        await follow(client, other, me)
    await follow(client, me, *one_way)
    for fan in fans:
        await follow(client, fan, me)
    items = await walk(client, me, "friends", 3)
    assert user_ids(items) == mutual[::-1]
    assert_newest_first(items)
    assert await get(client, f"/v1/users/{me}/counts") == full_counts(9, 10, friends=7)
    assert (await get(client, f"/v1/users/{mutual[0]}/counts"))["friends"] == 1

    await client.delete(f"/v1/users/{mutual[3]}/following/{me}")  # no longer mutual
    assert user_ids(await walk(client, me, "friends", 50)) == [
        m for m in mutual[::-1] if m != mutual[3]
    ]
    assert (await get(client, f"/v1/users/{me}/counts"))["friends"] == 6
    assert (await get(client, f"/v1/users/{mutual[3]}/counts"))["friends"] == 0


async def test_friends_of_unknown_user_are_empty(client: httpx.AsyncClient, uid: UserIds) -> None:
    assert await get(client, f"/v1/users/{uid('ghost')}/friends") == {
        "items": [],
        "next_cursor": None,
    }


# -- common following / followers ----------------------------------------------------------------


async def test_common_following_with_total_and_pages(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    both = sorted(uid(f"both{n}") for n in range(9))
    only_a, only_b = uid("only-a"), uid("only-b")
    await follow(client, a, *both, only_a)
    await follow(client, b, *both[::-1], only_b)
    first = await get(client, f"/v1/users/{a}/common-following/{b}", limit=4)
    assert first["total"] == 9
    assert first["items"] == both[:4]
    assert await walk(client, a, f"common-following/{b}", 4) == both
    assert await walk(client, b, f"common-following/{a}", 200) == both
    cursor = first["next_cursor"]
    response = await client.get(
        f"/v1/users/{b}/common-following/{a}", params={"cursor": cursor}
    )  # a cursor is bound to its pair
    assert response.status_code == 400
    ghost = uid("ghost")
    assert await get(client, f"/v1/users/{a}/common-following/{ghost}") == {
        "total": 0,
        "items": [],
        "next_cursor": None,
        "total_is_lower_bound": False,
    }


async def test_common_followers_of_two_users_with_20000_followers_each(
    make_client: Callable[..., httpx.AsyncClient],
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
    async with make_client(common_scan_max=20_000) as client:
        first = await get(client, f"/v1/users/{a}/common-followers/{b}", limit=200)
        assert first["total"] == 10_000 and not first["total_is_lower_bound"]
        assert first["items"] == expected[:200]
        assert await walk(client, a, f"common-followers/{b}", 200) == expected
        reverse = await get(client, f"/v1/users/{b}/common-followers/{a}", limit=5)
        assert reverse["total"] == 10_000 and reverse["items"] == expected[:5]
    async with make_client(common_scan_max=5_000) as client:
        # each request examines at most 5,000 of a's 20,000 followers: the first 10,000 (by
        # id) follow a only, so the first two pages come back empty with a cursor
        first = await get(client, f"/v1/users/{a}/common-followers/{b}", limit=200)
        assert first["total_is_lower_bound"] and first["total"] == 0
        assert first["items"] == [] and first["next_cursor"] is not None
        found, pages = await walk_ids(client, f"/v1/users/{a}/common-followers/{b}", 200)
        assert found == expected
        assert pages == 2 + 10_000 // 200


# -- familiar followers -------------------------------------------------------------------------


async def test_familiar_followers(client: httpx.AsyncClient, uid: UserIds) -> None:
    viewer, target = uid("viewer"), uid("target")
    known = [uid(f"k{n}") for n in range(14)]
    await follow(client, viewer, *known)
    for k in known[::2]:  # 7 of the people viewer follows also follow target
        await follow(client, k, target)
    strangers = [uid(f"s{n}") for n in range(3)]
    for s in strangers:
        await follow(client, s, target)
    await follow(client, viewer, target)  # the viewer itself is not a familiar follower
    body = await get(client, f"/v1/users/{viewer}/familiar-followers/{target}", limit=2)
    newest_first = known[::2][::-1]
    assert body == {
        "total": 7,
        "items": newest_first[:2],
        "next_cursor": None,
        "total_is_lower_bound": False,
    }
    full = await get(client, f"/v1/users/{viewer}/familiar-followers/{target}", limit=200)
    assert full["items"] == newest_first
    ghost = uid("ghost")
    assert (await get(client, f"/v1/users/{viewer}/familiar-followers/{ghost}"))["total"] == 0
    assert (await get(client, f"/v1/users/{ghost}/familiar-followers/{target}"))["total"] == 0


async def test_familiar_followers_of_a_celebrity(
    make_client: Callable[..., httpx.AsyncClient],
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
    async with make_client() as client:
        body = await get(
            client, f"/v1/users/{prefix}viewer/familiar-followers/{prefix}star", limit=3
        )
        assert body["total"] == 60
        assert body["items"] == [f"{prefix}fan{n:05d}" for n in (5900, 5800, 5700)]


# -- not followed back, celebrities ----------------------------------------------------------------


async def test_not_followed_back_and_not_following_back(
    make_client: Callable[..., httpx.AsyncClient], uid: UserIds
) -> None:
    me = uid("me")
    fans = [uid(f"fan{n}") for n in range(12)]
    idols = [uid(f"idol{n}") for n in range(5)]
    async with make_client(hot_list_cap=4) as client:  # pages cross the Redis/Neo4j seam
        for fan in fans:
            await follow(client, fan, me)
        followed_back = fans[1::3]
        await follow(client, me, *followed_back, *idols)
        items = await walk(client, me, "followers", 3, not_followed_back="true")
        assert user_ids(items) == [f for f in fans[::-1] if f not in followed_back]
        assert_newest_first(items)
        items = await walk(client, me, "following", 2, not_following_back="true")
        assert user_ids(items) == idols[::-1]
        plain = await walk(client, me, "followers", 5)
        assert user_ids(plain) == fans[::-1]


async def test_celebrities_only(
    make_client: Callable[..., httpx.AsyncClient], uid: UserIds
) -> None:
    reader = uid("reader")
    stars = [uid(f"star{n}") for n in range(3)]
    nobody = uid("nobody")
    async with make_client(celebrity_followers=3) as client:
        for star in stars:
            for n in range(3):
                await follow(client, uid(f"fan-{star[-5:]}-{n}"), star)
        await follow(client, reader, stars[0], nobody, stars[2])
        await follow(client, uid("fan-late"), stars[1])
        await follow(client, reader, stars[1])
        items = await walk(client, reader, "following", 2, celebrities_only="true")
        assert user_ids(items) == [stars[1], stars[2], stars[0]]
        counts = await get(client, f"/v1/users/{stars[1]}/counts")
        assert counts["celebrity"] is True and counts["followers"] == 5
        assert (await get(client, f"/v1/users/{nobody}/counts"))["celebrity"] is False
        # both filters: the celebrities the reader follows that do not follow it back
        await follow(client, stars[2], reader)
        both = await walk(
            client, reader, "following", 1, celebrities_only="true", not_following_back="true"
        )
        assert user_ids(both) == [stars[1], stars[0]]


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


async def test_common_followers_of_a_small_and_a_big_user(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    """Follower counts far apart take the other plan (walk the smaller side): same answer."""
    small, big = uid("small"), uid("big")
    fans = [uid(f"fan{n}") for n in range(3)]
    crowd = [uid(f"crowd{n}") for n in range(60)]
    for fan in fans:
        await follow(client, fan, small)
    for user in [*crowd, fans[0], fans[2]]:
        await follow(client, user, big)
    expected = sorted([fans[0], fans[2]])
    for a, b in ((small, big), (big, small)):
        body = await get(client, f"/v1/users/{a}/common-followers/{b}", limit=1)
        assert body["total"] == 2 and body["items"] == expected[:1]
        assert await walk(client, a, f"common-followers/{b}", 1) == expected
