"""Blocks, user statuses, follow limits and erasure, through the HTTP API on the real servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest import assert_consistent
from helpers import counts, full_counts, ids, service_of, walk

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.domain.model import Side

UserIds = Callable[[str], str]
MakeClient = Callable[..., httpx.AsyncClient]

BAD_IDS = ["a%20b", "x" * 65, "a*b", "a:b"]


# -- helpers ------------------------------------------------------------------------------------


def client_for(service: Services, key: str) -> httpx.AsyncClient:
    app = create_app(service.settings, service)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://graphsvc",
        headers={"Authorization": f"Bearer {key}"},
    )


async def id_page(client: httpx.AsyncClient, path: str) -> tuple[int, list[str]]:
    response = await client.get(path, params={"limit": 200})
    assert response.status_code == 200, response.text
    body = response.json()
    return body["total"], body["items"]


async def relation(client: httpx.AsyncClient, user: str, other: str) -> dict[str, bool]:
    response = await client.get(f"/v1/users/{user}/relationships", params={"ids": other})
    assert response.status_code == 200, response.text
    return response.json()["relationships"][other]


async def follow(client: httpx.AsyncClient, a: str, b: str) -> httpx.Response:
    return await client.put(f"/v1/users/{a}/following/{b}")


async def must_follow(client: httpx.AsyncClient, a: str, b: str, created: bool = True) -> None:
    response = await follow(client, a, b)
    assert response.status_code == 200, response.text
    assert response.json() == {"following": True, "created": created}


async def unfollow(client: httpx.AsyncClient, a: str, b: str) -> None:
    response = await client.delete(f"/v1/users/{a}/following/{b}")
    assert response.status_code == 200, response.text


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]


async def view(client: httpx.AsyncClient, users: list[str]) -> dict[str, object]:
    """Everything the API shows about these users: counts and the three lists."""
    shown: dict[str, object] = {}
    for user in users:
        shown[user] = {
            "counts": await counts(client, user),
            "followers": await ids(client, user, "followers"),
            "following": await ids(client, user, "following"),
            "friends": await ids(client, user, "friends"),
        }
    return shown


async def set_status(client: httpx.AsyncClient, user: str, status: str) -> dict[str, object]:
    response = await client.put(f"/v1/users/{user}/status", json={"status": status})
    assert response.status_code == 200, response.text
    return response.json()


async def get_status(client: httpx.AsyncClient, user: str) -> dict[str, object]:
    response = await client.get(f"/v1/users/{user}/status")
    assert response.status_code == 200, response.text
    return response.json()


def now_us() -> int:
    return time.time_ns() // 1_000


# -- blocks ---------------------------------------------------------------------------------------


async def test_block_removes_follows_both_ways_and_refuses_new_ones(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await must_follow(client, a, b)
    await must_follow(client, b, a)
    await must_follow(client, c, a)
    await must_follow(client, c, b)
    assert await counts(client, a) == full_counts(2, 1, friends=1)
    assert await counts(client, b) == full_counts(2, 1, friends=1)
    assert await ids(client, a, "friends") == [b]

    response = await client.put(f"/v1/users/{a}/blocks/{b}")
    assert response.status_code == 200, response.text
    assert response.json() == {"blocking": True, "created": True, "removed_follows": 2}

    assert await counts(client, a) == full_counts(1, 0)
    assert await counts(client, b) == full_counts(1, 0)
    assert await counts(client, c) == full_counts(0, 2)
    assert await ids(client, a, "followers") == [c]
    assert await ids(client, a, "following") == []
    assert await ids(client, b, "followers") == [c]
    assert await ids(client, b, "following") == []
    assert await ids(client, a, "friends") == []
    assert await ids(client, b, "friends") == []
    assert await relation(client, a, b) == {
        "following": False, "followed_by": False, "mutual": False,
        "blocking": True, "blocked_by": False,
    }  # fmt: skip
    assert await relation(client, b, a) == {
        "following": False, "followed_by": False, "mutual": False,
        "blocking": False, "blocked_by": True,
    }  # fmt: skip

    again = await client.put(f"/v1/users/{a}/blocks/{b}")
    assert again.json() == {"blocking": True, "created": False, "removed_follows": 0}

    before = await view(client, [a, b, c])
    for src, dst in ((a, b), (b, a)):
        error = assert_error(await follow(client, src, dst), 403, "blocked")
        assert a in error["message"] and b in error["message"]
    assert await view(client, [a, b, c]) == before

    unblocked = await client.delete(f"/v1/users/{a}/blocks/{b}")
    assert unblocked.status_code == 200, unblocked.text
    assert unblocked.json() == {"blocking": False, "removed": True}
    again = await client.delete(f"/v1/users/{a}/blocks/{b}")
    assert again.json() == {"blocking": False, "removed": False}
    rel = await relation(client, a, b)
    assert not rel["blocking"] and not rel["blocked_by"]

    # The follows the block removed are not restored...
    assert await view(client, [a, b, c]) == before
    # ...but new follows work again, both ways.
    await must_follow(client, b, a)
    await must_follow(client, a, b)
    assert await counts(client, a) == full_counts(2, 1, friends=1)
    assert await ids(client, a, "friends") == [b]


async def test_block_by_the_followed_user_and_of_unknown_users(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a, b, ghost = uid("a"), uid("b"), uid("ghost")
    await must_follow(client, a, b)
    response = await client.put(f"/v1/users/{b}/blocks/{a}")
    assert response.json() == {"blocking": True, "created": True, "removed_follows": 1}
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, b) == full_counts(0, 0)
    assert await ids(client, b, "followers") == []
    assert (await relation(client, a, b))["blocked_by"] is True
    assert_error(await follow(client, a, b), 403, "blocked")
    # The blocked side cannot lift the block: it does not own it.
    not_mine = await client.delete(f"/v1/users/{a}/blocks/{b}")
    assert not_mine.json() == {"blocking": False, "removed": False}
    assert_error(await follow(client, a, b), 403, "blocked")
    # Blocks both ways: lifting one leaves the other in force.
    both = await client.put(f"/v1/users/{a}/blocks/{b}")
    assert both.json() == {"blocking": True, "created": True, "removed_follows": 0}
    assert await relation(client, a, b) == {
        "following": False, "followed_by": False, "mutual": False,
        "blocking": True, "blocked_by": True,
    }  # fmt: skip
    assert (await client.delete(f"/v1/users/{b}/blocks/{a}")).json()["removed"] is True
    for src, dst in ((a, b), (b, a)):
        assert_error(await follow(client, src, dst), 403, "blocked")
    assert (await client.delete(f"/v1/users/{a}/blocks/{b}")).json()["removed"] is True
    await must_follow(client, b, a)
    assert await counts(client, a) == full_counts(1, 0)

    # Blocking a user nobody knows works, and then refuses that user's follows.
    fresh = await client.put(f"/v1/users/{a}/blocks/{ghost}")
    assert fresh.json() == {"blocking": True, "created": True, "removed_follows": 0}
    assert_error(await follow(client, ghost, a), 403, "blocked")
    assert await counts(client, ghost) == full_counts(0, 0)


async def test_block_removes_a_spam_users_follow_exactly(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    """A spam user's follows are flagged (counted apart); a block must unflag them exactly."""
    spam, a = uid("spam"), uid("a")
    await set_status(client, spam, "spam")
    await service_of(client).jobs.drain()
    await must_follow(client, spam, a)
    await must_follow(client, a, spam)
    assert await counts(client, a) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    response = await client.put(f"/v1/users/{a}/blocks/{spam}")
    assert response.json()["removed_follows"] == 2
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, spam) == full_counts(0, 0)
    await set_status(client, spam, "active")
    await service_of(client).jobs.drain()
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, spam) == full_counts(0, 0)


async def test_self_block_is_403_and_bad_ids_are_422(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    a = uid("a")
    for method in ("PUT", "DELETE"):
        response = await client.request(method, f"/v1/users/{a}/blocks/{a}")
        error = assert_error(response, 403, "self_follow")
        assert a in error["message"]
    for bad in BAD_IDS:
        for path in (f"/v1/users/{bad}/blocks/{a}", f"/v1/users/{a}/blocks/{bad}"):
            for method in ("PUT", "DELETE"):
                assert_error(await client.request(method, path), 422, "invalid_user_id")
    assert (await relation(client, a, a))["blocking"] is False
    assert await counts(client, a) == full_counts(0, 0)


async def test_blocked_users_are_left_out_of_familiar_followers_and_friends(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    viewer, target = uid("viewer"), uid("target")
    f1, f2, f3 = uid("f1"), uid("f2"), uid("f3")
    for friend in (f1, f2, f3):
        await must_follow(client, viewer, friend)
        await must_follow(client, friend, viewer)
        await must_follow(client, friend, target)
    familiar = f"/v1/users/{viewer}/familiar-followers/{target}"
    assert await id_page(client, familiar) == (3, [f3, f2, f1])
    assert await ids(client, viewer, "friends") == [f3, f2, f1]

    # The viewer blocks one of them, and another blocks the viewer.
    await client.put(f"/v1/users/{viewer}/blocks/{f1}")
    await client.put(f"/v1/users/{f2}/blocks/{viewer}")
    assert await id_page(client, familiar) == (1, [f3])
    assert await ids(client, viewer, "friends") == [f3]
    assert await counts(client, viewer) == full_counts(1, 1, friends=1)
    assert await ids(client, f1, "friends") == []
    assert await ids(client, f2, "friends") == []
    # Unblocking does not bring them back (their follows are gone).
    await client.delete(f"/v1/users/{viewer}/blocks/{f1}")
    assert await id_page(client, familiar) == (1, [f3])
    assert await ids(client, viewer, "friends") == [f3]


# -- statuses -------------------------------------------------------------------------------------


async def test_status_is_set_shown_and_validated(client: httpx.AsyncClient, uid: UserIds) -> None:
    user, ghost, fan = uid("user"), uid("ghost"), uid("fan")
    await must_follow(client, fan, user)

    assert await get_status(client, ghost) == {
        "user_id": ghost, "exists": False, "status": "active",
        "fanout_pending": False, "erasing": False, "progress": None,
    }  # fmt: skip
    assert await get_status(client, user) == {
        "user_id": user, "exists": True, "status": "active",
        "fanout_pending": False, "erasing": False, "progress": None,
    }  # fmt: skip

    body = await set_status(client, user, "suspended")
    assert body["user_id"] == user and body["exists"] is True
    assert body["status"] == "suspended" and body["erasing"] is False
    assert body["fanout_pending"] is True  # active -> inactive: counts of others must update
    await service_of(client).jobs.drain()
    assert await get_status(client, user) == {
        "user_id": user, "exists": True, "status": "suspended",
        "fanout_pending": False, "erasing": False, "progress": None,
    }  # fmt: skip

    # Between two inactive statuses there is nothing to fan out.
    body = await set_status(client, user, "spam")
    assert body["status"] == "spam" and body["fanout_pending"] is False
    assert (await get_status(client, user))["status"] == "spam"

    before = await view(client, [user, fan])
    for bad in ({"status": "banned"}, {"status": ""}, {"status": None}, {}, {"state": "active"}):
        response = await client.put(f"/v1/users/{user}/status", json=bad)
        assert_error(response, 422, "invalid_request")
    response = await client.put(f"/v1/users/{user}/status", content=b"not json")
    assert response.status_code == 422
    assert (await get_status(client, user))["status"] == "spam"
    assert await view(client, [user, fan]) == before

    # Bad statuses never create users either.
    response = await client.put(f"/v1/users/{ghost}/status", json={"status": "deleted"})
    assert_error(response, 422, "invalid_request")
    assert (await get_status(client, ghost))["exists"] is False

    for bad in BAD_IDS:
        response = await client.put(f"/v1/users/{bad}/status", json={"status": "spam"})
        assert_error(response, 422, "invalid_user_id")
        assert_error(await client.get(f"/v1/users/{bad}/status"), 422, "invalid_user_id")

    await set_status(client, user, "active")
    await service_of(client).jobs.drain()
    assert (await get_status(client, user))["status"] == "active"
    assert await counts(client, fan) == full_counts(0, 1)


async def test_suspended_user_disappears_and_cannot_follow_or_be_followed(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    s, a, b, c, d = uid("s"), uid("a"), uid("b"), uid("c"), uid("d")
    await must_follow(client, s, a)
    await must_follow(client, s, b)
    await must_follow(client, a, s)
    await must_follow(client, c, s)
    await must_follow(client, c, b)
    users = [s, a, b, c, d]
    common_followers = f"/v1/users/{a}/common-followers/{b}"  # who follows both a and b
    common_following = f"/v1/users/{a}/common-following/{c}"  # whom both a and c follow
    familiar = f"/v1/users/{c}/familiar-followers/{a}"  # whom c follows that follow a
    assert await id_page(client, common_followers) == (1, [s])
    assert await id_page(client, common_following) == (1, [s])
    assert await id_page(client, familiar) == (1, [s])
    active_view = await view(client, users)
    assert active_view[a]["counts"] == full_counts(1, 1, friends=1)  # type: ignore[index]

    await set_status(client, s, "suspended")
    # Lists hide the user at once; the counts of others follow in the background.
    assert await ids(client, a, "followers") == []
    assert await ids(client, b, "followers") == [c]
    assert await ids(client, c, "following") == [b]
    await service_of(client).jobs.drain()

    assert await counts(client, s) == full_counts(2, 2, friends=1)  # its own view is unchanged
    assert await counts(client, a) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    assert await counts(client, b) == full_counts(2, 0, followers_active=1)
    assert await counts(client, c) == full_counts(0, 2, following_active=1)
    assert await ids(client, a, "followers") == []
    assert await ids(client, a, "following") == []
    assert await ids(client, a, "friends") == []
    assert await ids(client, b, "followers") == [c]
    assert await ids(client, c, "following") == [b]
    assert await id_page(client, common_followers) == (0, [])
    assert await id_page(client, common_following) == (0, [])
    assert await id_page(client, familiar) == (0, [])

    # No follows from or to a suspended user, and a refusal changes nothing.
    before = await view(client, users)
    error = assert_error(await follow(client, s, c), 403, "user_suspended")
    assert s in error["message"]
    error = assert_error(await follow(client, d, s), 403, "user_suspended")
    assert s in error["message"]
    assert await view(client, users) == before
    assert not (await relation(client, d, s))["following"]

    await set_status(client, s, "active")
    await service_of(client).jobs.drain()
    assert await view(client, users) == active_view
    assert await id_page(client, common_followers) == (1, [s])
    assert await id_page(client, common_following) == (1, [s])
    assert await id_page(client, familiar) == (1, [s])
    await must_follow(client, s, c)
    await must_follow(client, d, s)


async def test_spam_user_follows_in_the_shadow(client: httpx.AsyncClient, uid: UserIds) -> None:
    p, a, b, m, n, q = uid("p"), uid("a"), uid("b"), uid("m"), uid("n"), uid("q")
    await must_follow(client, p, a)  # p follows a
    await must_follow(client, b, p)  # b follows p
    await must_follow(client, p, m)  # p and m are friends
    await must_follow(client, m, p)
    users = [p, a, b, m, n, q]

    await set_status(client, p, "spam")
    await service_of(client).jobs.drain()
    assert (await get_status(client, p))["status"] == "spam"

    # A spam user still follows (shadow), and may still be followed.
    await must_follow(client, p, n)
    await must_follow(client, q, p)

    assert await counts(client, a) == full_counts(1, 0, followers_active=0)
    assert await counts(client, n) == full_counts(1, 0, followers_active=0)
    assert await counts(client, b) == full_counts(0, 1, following_active=0)
    assert await counts(client, q) == full_counts(0, 1, following_active=0)
    assert await counts(client, m) == full_counts(
        1, 1, followers_active=0, following_active=0, friends=0
    )
    assert await counts(client, p) == full_counts(3, 3, friends=1)
    for user, side in ((a, "followers"), (n, "followers"), (b, "following"), (q, "following")):
        assert await ids(client, user, side) == [], (user, side)
    assert await ids(client, m, "friends") == []
    assert await ids(client, m, "followers") == []
    assert await ids(client, p, "following") == [n, m, a]  # the spammer sees its own follows

    # Unfollowing a shadow follow keeps the counts exact.
    await unfollow(client, p, n)
    assert await counts(client, n) == full_counts(0, 0)
    await must_follow(client, p, n)

    await set_status(client, p, "active")
    await service_of(client).jobs.drain()
    assert await counts(client, a) == full_counts(1, 0)
    assert await counts(client, n) == full_counts(1, 0)
    assert await counts(client, b) == full_counts(0, 1)
    assert await counts(client, q) == full_counts(0, 1)
    assert await counts(client, m) == full_counts(1, 1, friends=1)
    assert await counts(client, p) == full_counts(3, 3, friends=1)
    assert await ids(client, a, "followers") == [p]
    assert await ids(client, n, "followers") == [p]
    assert await ids(client, b, "following") == [p]
    assert await ids(client, q, "following") == [p]
    assert await ids(client, m, "friends") == [p]
    assert (await view(client, users))[p]["counts"] == full_counts(3, 3, friends=1)  # type: ignore[index]


async def test_status_fanout_in_many_batches(
    make_service: Callable[..., Services], service_key: str, uid: UserIds
) -> None:
    service = make_service(fanout_batch_edges=7, rate_limits_enabled=False)
    spammer = uid("spammer")
    followed = [uid(f"followed{n}") for n in range(30)]
    fans = [uid(f"fan{n}") for n in range(30)]
    for user in followed:
        await service.relations.follow(spammer, user)
    for fan in fans:
        await service.relations.follow(fan, spammer)
    for user in followed[:5]:  # some friends too
        await service.relations.follow(user, spammer)
    async with client_for(service, service_key) as client:
        for user in followed + fans:  # warm mirrors take the fan-out's refreshes
            await counts(client, user)
        await set_status(client, spammer, "spam")
        state = await get_status(client, spammer)
        assert state["status"] == "spam"
        await service.jobs.drain()
        assert (await get_status(client, spammer))["fanout_pending"] is False
        for user in followed[5:]:
            assert await counts(client, user) == full_counts(1, 0, followers_active=0)
        for user in followed[:5]:
            assert await counts(client, user) == full_counts(
                1, 1, followers_active=0, following_active=0
            )
        for fan in fans:
            assert await counts(client, fan) == full_counts(0, 1, following_active=0)

        await set_status(client, spammer, "active")
        await service.jobs.drain()
        for user in followed[5:]:
            assert await counts(client, user) == full_counts(1, 0)
        for user in followed[:5]:
            assert await counts(client, user) == full_counts(1, 1, friends=1)
        for fan in fans:
            assert await counts(client, fan) == full_counts(0, 1)
        assert await counts(client, spammer) == full_counts(35, 30, friends=5)


async def test_status_flip_flop_settles_on_the_last_status(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    user, a, b = uid("user"), uid("a"), uid("b")
    await must_follow(client, user, a)
    await must_follow(client, b, user)
    for status in ("spam", "active", "suspended", "active", "spam"):
        await set_status(client, user, status)
    await service_of(client).jobs.drain()
    assert await get_status(client, user) == {
        "user_id": user, "exists": True, "status": "spam",
        "fanout_pending": False, "erasing": False, "progress": None,
    }  # fmt: skip
    assert await counts(client, a) == full_counts(1, 0, followers_active=0)
    assert await counts(client, b) == full_counts(0, 1, following_active=0)
    await set_status(client, user, "active")
    await service_of(client).jobs.drain()
    assert await counts(client, a) == full_counts(1, 0)
    assert await counts(client, b) == full_counts(0, 1)


# -- limits ---------------------------------------------------------------------------------------


async def test_following_limit(make_client: MakeClient, uid: UserIds) -> None:
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(5)]
    async with make_client(max_following=3) as client:
        for target in targets[:3]:
            await must_follow(client, user, target)
        error = assert_error(await follow(client, user, targets[3]), 409, "following_limit")
        assert "3" in error["message"] and user in error["message"]
        assert await counts(client, user) == full_counts(0, 3)
        assert await counts(client, targets[3]) == full_counts(0, 0)
        assert not (await relation(client, user, targets[3]))["following"]
        # Re-following at the limit is never refused.
        await must_follow(client, user, targets[0], created=False)
        # Others may still follow the user at its limit.
        await must_follow(client, targets[4], user)

        await unfollow(client, user, targets[1])
        await must_follow(client, user, targets[3])
        assert_error(await follow(client, user, targets[4]), 409, "following_limit")
        assert await ids(client, user, "following") == [targets[3], targets[2], targets[0]]
        assert await counts(client, user) == full_counts(1, 3)


async def test_follow_rate_limit_resets_after_the_window(
    make_client: MakeClient, uid: UserIds
) -> None:
    user = uid("user")
    targets = [uid(f"t{n}") for n in range(5)]
    async with make_client(follows_per_day=3, follow_window_seconds=2) as client:
        await must_follow(client, user, targets[0])
        # Repeated follows of one user are not new follows: they use up nothing.
        for _ in range(4):
            await must_follow(client, user, targets[0], created=False)
        await must_follow(client, user, targets[1])
        await must_follow(client, user, targets[2])

        refused = await follow(client, user, targets[3])
        error = assert_error(refused, 429, "follow_rate_limit")
        retry_after = int(refused.headers["Retry-After"])
        assert 1 <= retry_after <= 2
        assert user in error["message"] and "allowed at " in error["message"]
        stamp = error["message"].rsplit("allowed at ", 1)[1].rstrip(".")
        resets = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        assert datetime.now(UTC) < resets <= datetime.now(UTC) + timedelta(seconds=2)
        assert await counts(client, user) == full_counts(0, 3)
        assert await counts(client, targets[3]) == full_counts(0, 0)
        # Re-following is never refused, even at the rate limit.
        await must_follow(client, user, targets[1], created=False)

        await asyncio.sleep(max(0.0, (resets - datetime.now(UTC)).total_seconds()) + 0.05)
        await must_follow(client, user, targets[3])
        assert await counts(client, user) == full_counts(0, 4)
        assert await ids(client, targets[3], "followers") == [user]


async def test_unfollow_and_refollow_churn_counts_against_the_rate_limit(
    make_client: MakeClient, uid: UserIds
) -> None:
    user, target, other = uid("user"), uid("target"), uid("other")
    async with make_client(follows_per_day=3, follow_window_seconds=60) as client:
        for _ in range(3):
            await must_follow(client, user, target)
            await unfollow(client, user, target)
        response = await follow(client, user, target)
        assert_error(response, 429, "follow_rate_limit")
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        assert_error(await follow(client, user, other), 429, "follow_rate_limit")
        assert await counts(client, user) == full_counts(0, 0)
        assert await counts(client, target) == full_counts(0, 0)
    # The limit belongs to the follower: another user is not affected.
    async with make_client(follows_per_day=3, follow_window_seconds=60) as client:
        await must_follow(client, other, target)


# -- erasure --------------------------------------------------------------------------------------


async def test_erasing_an_unknown_user_and_bad_ids(client: httpx.AsyncClient, uid: UserIds) -> None:
    ghost = uid("ghost")
    response = await client.delete(f"/v1/users/{ghost}")
    assert response.status_code == 200, response.text
    assert response.json() == {"user_id": ghost, "state": "absent"}
    assert (await get_status(client, ghost))["exists"] is False
    for bad in BAD_IDS:
        assert_error(await client.delete(f"/v1/users/{bad}"), 422, "invalid_user_id")


async def test_follows_to_and_from_an_erasing_user_are_409(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    user, fan, followed, newcomer = uid("user"), uid("fan"), uid("followed"), uid("newcomer")
    await must_follow(client, fan, user)
    await must_follow(client, user, followed)
    assert (await backends.neo4j.moderation.erase_begin(user))[
        0
    ]  # as DELETE does, before its job starts

    assert (await get_status(client, user))["erasing"] is True
    before = await view(client, [fan, followed, newcomer])
    for src, dst in ((newcomer, user), (user, newcomer)):
        error = assert_error(await follow(client, src, dst), 409, "user_erasing")
        assert user in error["message"]
    # A follow that already exists is just reported.
    await must_follow(client, fan, user, created=False)
    assert await view(client, [fan, followed, newcomer]) == before

    response = await client.delete(f"/v1/users/{user}")
    assert response.status_code == 202, response.text
    assert response.json() == {"user_id": user, "state": "erasing"}
    await service_of(client).jobs.drain()
    assert (await get_status(client, user))["exists"] is False
    assert await counts(client, fan) == full_counts(0, 0)
    assert await counts(client, followed) == full_counts(0, 0)
    assert await counts(client, user) == full_counts(0, 0)


async def test_erasing_a_spam_user_with_blocks(client: httpx.AsyncClient, uid: UserIds) -> None:
    spam, a, b, c, d = uid("spam"), uid("a"), uid("b"), uid("c"), uid("d")
    await must_follow(client, spam, a)
    await must_follow(client, spam, b)
    await must_follow(client, c, spam)
    await client.put(f"/v1/users/{spam}/blocks/{d}")
    await client.put(f"/v1/users/{b}/blocks/{c}")
    await set_status(client, spam, "spam")
    await service_of(client).jobs.drain()
    await must_follow(client, spam, c)  # a shadow follow made while spam
    assert await counts(client, a) == full_counts(1, 0, followers_active=0)

    response = await client.delete(f"/v1/users/{spam}")
    assert response.status_code == 202
    await service_of(client).jobs.drain()
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, b) == full_counts(0, 0)
    assert await counts(client, c) == full_counts(0, 0)
    assert await ids(client, c, "following") == []
    assert (await relation(client, d, spam))["blocked_by"] is False
    assert (await relation(client, c, b))["blocked_by"] is True  # others' blocks stay
    assert await get_status(client, spam) == {
        "user_id": spam, "exists": False, "status": "active",
        "fanout_pending": False, "erasing": False, "progress": None,
    }  # fmt: skip


async def test_an_erased_spam_users_id_comes_back_as_an_active_user(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    """After an erasure the id is free: following it makes a new user, active like any other."""
    spam, fan, friend = uid("spam"), uid("fan"), uid("friend")
    await must_follow(client, spam, fan)
    await set_status(client, spam, "spam")
    await service_of(client).jobs.drain()
    assert (await client.delete(f"/v1/users/{spam}")).status_code == 202
    await service_of(client).jobs.drain()
    assert (await get_status(client, spam))["exists"] is False

    await must_follow(client, friend, spam)
    await must_follow(client, spam, friend)
    try:
        assert (await get_status(client, spam))["status"] == "active"
        assert await counts(client, friend) == full_counts(1, 1, friends=1)
        assert await ids(client, friend, "following") == [spam]
        assert await ids(client, friend, "followers") == [spam]
        assert await ids(client, friend, "friends") == [spam]
        await assert_consistent(backends, {spam, fan, friend})
    finally:
        # Whatever happened above, leave the mirror right for the module's end check.
        await set_status(client, spam, "active")
        await service_of(client).jobs.drain()


async def test_erasing_a_user_with_5000_followers(
    make_client: MakeClient, backends: Services, uid: UserIds
) -> None:
    star, other = uid("star"), uid("other")
    fans = [uid(f"fan{n}") for n in range(5_000)]
    followed = [uid(f"followed{n}") for n in range(20)]
    graph = backends.neo4j.bulk
    await graph.load_users([star, other, *fans])
    start = now_us() - 60_000_000
    for chunk in range(0, len(fans), 1_000):
        rows = [{"s": f, "d": star, "t": start + 2 * n} for n, f in enumerate(fans)][
            chunk : chunk + 1_000
        ]
        rows += [{"s": f, "d": other, "t": start + 2 * n + 1} for n, f in enumerate(fans)][
            chunk : chunk + 1_000
        ]
        await graph.load_edges(rows)

    async with make_client(fanout_batch_edges=200) as client:
        service = service_of(client)
        for user in followed:
            await must_follow(client, star, user)
        await must_follow(client, followed[0], star)  # a friend
        await must_follow(client, followed[1], fans[0])
        await client.put(f"/v1/users/{followed[2]}/blocks/{star}")
        # Warm mirrors: the erasure must keep them exact, not merely let them go cold.
        await service.mirror_sync.rebuild([star, other, *fans, *followed])
        assert await counts(client, star) == full_counts(5_001, 19, friends=1)  # one blocked it
        assert await counts(client, fans[7]) == full_counts(0, 2)
        assert await counts(client, other) == full_counts(5_000, 0)

        response = await client.delete(f"/v1/users/{star}")
        assert response.status_code == 202, response.text
        assert response.json() == {"user_id": star, "state": "erasing"}
        during = await get_status(client, star)
        if during["exists"]:  # the job runs in 25+ batches: normally still busy here
            assert during["erasing"] is True
            assert during["progress"] is None or isinstance(during["progress"], dict)
            refused = await follow(client, other, star)
            if refused.status_code != 200:  # unless the node went in between
                assert_error(refused, 409, "user_erasing")
        await service.jobs.drain()

        assert await get_status(client, star) == {
            "user_id": star, "exists": False, "status": "active",
            "fanout_pending": False, "erasing": False, "progress": None,
        }  # fmt: skip
        assert await counts(client, star) == full_counts(0, 0)
        assert await ids(client, star, "followers") == []
        assert await ids(client, star, "following") == []
        assert await counts(client, other) == full_counts(5_000, 0)
        for user in followed:
            expected = full_counts(0, 1) if user == followed[1] else full_counts(0, 0)
            assert await counts(client, user) == expected, user
            assert star not in await ids(client, user, "followers")
        assert (await relation(client, followed[2], star))["blocking"] is False
        # Every fan: exact counts (from the warm mirror) and a following list without the star.
        fan_counts = []
        for chunk in range(0, len(fans), 50):  # within the Redis pool's size
            fan_counts += await asyncio.gather(
                *(service.lists.counts(f) for f in fans[chunk : chunk + 50])
            )
        assert {f: c for f, c in zip(fans, fan_counts, strict=True) if c.following != 1} == {}
        assert all(c.followers == 0 for c in fan_counts[1:]) and fan_counts[0].followers == 1
        for fan in fans[::500]:
            assert await counts(client, fan) == full_counts(1 if fan == fans[0] else 0, 1)
            assert await ids(client, fan, "following") == [other]
        followers_of_other = await walk(client, other, "followers", 200)
        assert len(followers_of_other) == 5_000
        truth = await backends.neo4j.snapshots.snapshots(fans)
        assert {f: s.totals.following for f, s in truth.items() if s.totals.following != 1} == {}
        assert star not in await backends.neo4j.snapshots.snapshots([star])
    await assert_consistent(backends, {star, other, *fans, *followed})


# -- unknown and malformed ids --------------------------------------------------------------------


async def test_unknown_ids_give_empty_answers(client: httpx.AsyncClient, uid: UserIds) -> None:
    ghost, other, known = uid("ghost"), uid("other"), uid("known")
    await must_follow(client, known, other)
    response = await client.get(
        f"/v1/users/{ghost}/relationships", params={"ids": f"{other},{known}"}
    )
    assert response.status_code == 200
    nothing = {"following": False, "followed_by": False, "mutual": False,
               "blocking": False, "blocked_by": False}  # fmt: skip
    assert response.json() == {"relationships": {other: nothing, known: nothing}}
    assert await relation(client, known, ghost) == nothing
    assert await id_page(client, f"/v1/users/{ghost}/familiar-followers/{other}") == (0, [])
    assert await id_page(client, f"/v1/users/{known}/familiar-followers/{ghost}") == (0, [])
    assert await ids(client, ghost, "friends") == []
    unblock = await client.delete(f"/v1/users/{ghost}/blocks/{other}")
    assert unblock.json() == {"blocking": False, "removed": False}
    assert (await get_status(client, ghost))["exists"] is False
    assert await counts(client, ghost) == full_counts(0, 0)


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_malformed_ids_are_422(client: httpx.AsyncClient, uid: UserIds, bad: str) -> None:
    good = uid("good")
    for method, path in (
        ("GET", f"/v1/users/{bad}/relationships?ids={good}"),
        ("GET", f"/v1/users/{good}/relationships?ids={bad}"),
        ("GET", f"/v1/users/{bad}/familiar-followers/{good}"),
        ("GET", f"/v1/users/{good}/familiar-followers/{bad}"),
        ("GET", f"/v1/users/{bad}/friends"),
        ("GET", f"/v1/users/{bad}/status"),
        ("DELETE", f"/v1/users/{bad}"),
        ("PUT", f"/v1/users/{bad}/blocks/{good}"),
        ("DELETE", f"/v1/users/{good}/blocks/{bad}"),
    ):
        assert_error(await client.request(method, path), 422, "invalid_user_id")
    assert await counts(client, good) == full_counts(0, 0)


# -- stops between a commit and its mirror write (found in review) ------------------------------


async def test_an_erasure_stopped_before_mirroring_a_batch_replays_it(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    star = uid("star")
    fans = [uid(f"fan{n}") for n in range(12)]
    for fan in fans:
        await must_follow(client, fan, star)
    service = service_of(client)
    await service.mirror_sync.rebuild([star, *fans])  # warm: a missed removal would show
    assert (await backends.neo4j.moderation.erase_begin(star))[0]
    # A batch commits in Neo4j, and the process stops before its mirror write.
    removed = await backends.neo4j.moderation.erase_batch(star, Side.FOLLOWERS, 5)
    assert len(removed) == 5
    await service.moderation.start_erasure(star)  # as on the next start
    await service.jobs.drain()
    for fan in fans:
        assert await counts(client, fan) == full_counts(0, 0), fan
        assert await ids(client, fan, "following") == []
    await assert_consistent(backends, {star, *fans})


async def test_two_users_who_follow_each_other_erased_together(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    x, f, g = uid("x"), uid("f"), uid("g")
    await must_follow(client, x, f)
    await must_follow(client, f, x)
    await must_follow(client, g, x)
    await must_follow(client, g, f)
    service = service_of(client)
    await service.mirror_sync.rebuild([x, f, g])
    for user in (x, f):
        assert (await client.delete(f"/v1/users/{user}")).status_code == 202
    await service.jobs.drain()
    assert await counts(client, g) == full_counts(0, 0)
    assert await ids(client, g, "following") == []
    for user in (x, f):
        assert (await get_status(client, user))["exists"] is False
    await assert_consistent(backends, {x, f, g})


async def test_a_retried_block_repairs_a_lost_mirror_write(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await must_follow(client, b, a)
    await must_follow(client, a, b)
    await service_of(client).mirror_sync.rebuild([a, b])
    await backends.neo4j.edges.block(a, b)  # committed; its mirror write never happened
    assert await ids(client, a, "followers") == [b]  # stale, as mirrored
    response = await client.put(f"/v1/users/{a}/blocks/{b}")  # the client retries
    assert response.json() == {"blocking": True, "created": False, "removed_follows": 0}
    assert await ids(client, a, "followers") == []
    assert await counts(client, a) == full_counts(0, 0)
    assert await counts(client, b) == full_counts(0, 0)


async def test_a_lost_status_write_is_repaired_by_the_fanout(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    user, fan = uid("user"), uid("fan")
    await must_follow(client, user, fan)
    assert await ids(client, fan, "followers") == [user]
    await backends.neo4j.moderation.set_status(user, "suspended")  # committed; the process stopped
    service = service_of(client)
    await service.worker.take_moderation_jobs()  # a worker finds the mark
    await service.jobs.drain()
    assert await ids(client, fan, "followers") == []
    assert await counts(client, fan) == full_counts(1, 0, followers_active=0)
    await set_status(client, user, "active")
    await service.jobs.drain()


async def test_common_lists_need_two_users(client: httpx.AsyncClient, uid: UserIds) -> None:
    a = uid("a")
    for path in ("common-followers", "common-following"):
        response = await client.get(f"/v1/users/{a}/{path}/{a}")
        assert_error(response, 403, "self_action")
