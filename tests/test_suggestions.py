"""People you may know on the real servers: interactions, affinity, suggestions, dismissals."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from helpers import ids, service_of

from graphsvc.bootstrap import Services

UserIds = Callable[[str], str]
MakeClient = Callable[..., httpx.AsyncClient]


async def follow(client: httpx.AsyncClient, *pairs: tuple[str, str]) -> None:
    for a, b in pairs:
        response = await client.put(f"/v1/users/{a}/following/{b}")
        assert response.status_code == 200, response.text


async def exist(client: httpx.AsyncClient, *user_ids: str) -> None:
    """Users in the graph with no edge yet (interactions are applied between known users only)."""
    await service_of(client).neo4j.bulk.load_users(user_ids)


async def interact(client: httpx.AsyncClient, *events: tuple[str, str, str, datetime]) -> None:
    body = [{"actor": a, "target": t, "kind": k, "at": at.isoformat()} for a, t, k, at in events]
    response = await client.post("/v1/interactions", json=body)
    assert response.status_code == 202, response.text
    assert response.json() == {"accepted": len(events)}
    await service_of(client).interaction_flusher.flush_all()


async def suggested(client: httpx.AsyncClient, user: str, limit: int = 50) -> list[dict]:
    response = await client.get(f"/v1/users/{user}/suggestions", params={"limit": limit})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def by_id(items: list[dict]) -> dict[str, dict]:
    return {item["user_id"]: item for item in items}


async def affinities(client: httpx.AsyncClient, user: str) -> dict[str, float]:
    response = await client.get(f"/v1/internal/users/{user}/affinities", params={"limit": 100})
    assert response.status_code == 200, response.text
    return {item["user_id"]: item["affinity"] for item in response.json()["items"]}


def now() -> datetime:
    return datetime.now(UTC)


# For parameters only: tests take the time when they run (affinity decays meanwhile).
NOW = now()


# -- interactions and affinity ------------------------------------------------------------------


async def test_affinity_decays_with_the_configured_half_life(
    make_client: MakeClient, uid: UserIds
) -> None:
    me, a, b = uid("me"), uid("a"), uid("b")
    async with make_client(affinity_half_life_days=7) as client:
        await exist(client, me, a, b)
        t = now()
        await interact(
            client,
            (me, a, "message", t - timedelta(days=7)),  # 5 -> 2.5
            (a, me, "comment", t - timedelta(days=14)),  # 3 -> 0.75 (affinity is both ways)
            (me, b, "profile_visit", t),  # 1
            (me, b, "like", t - timedelta(days=21)),  # 2 -> 0.25
        )
        found = await affinities(client, me)
    assert found == pytest.approx({a: 3.25, b: 1.25}, rel=2e-5)  # a second of decay is 1e-6
    assert list(found) == [a, b]  # closest first


async def test_events_apply_exactly_once_and_survive_a_restart(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    me, a = uid("me"), uid("a")
    await backends.neo4j.bulk.load_users([me, a])
    t = now()
    first = make_service()
    await first.interaction_flusher.flush_all()
    await first.interactions.record_raw([(me, a, 5.0, _micros(t))])
    # The process stops after Neo4j applied the batch, before the buffer was trimmed.
    last = await backends.neo4j.suggestions.interactions_checkpoint()
    batches = await first.interactions.buffer.read_after(last, 10)
    await backends.neo4j.suggestions.apply_interactions(
        [{"a": me, "b": a, "w": 5.0, "at": _micros(t), "raw": 5.0, "day": -1}],
        checkpoint=last,
        last=batches[-1].entry_id,
        half_life_us=first.interactions.half_life_us,
        daily_max=first.settings.interactions_pair_daily_max,
    )
    restarted = make_service()  # a new process: nothing in memory, the buffer in Redis
    await restarted.interactions.record_raw([(a, me, 2.0, _micros(t))])
    await restarted.interaction_flusher.flush_all()
    assert await restarted.interactions.affinities(me, 10) == [(a, pytest.approx(7.0, rel=1e-4))]


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


@pytest.mark.parametrize(
    ("event", "status", "expected"),
    [
        ({"kind": "poke"}, 422, "unknown kind 'poke'"),
        ({"target": "SELF"}, 403, "interacts with itself"),
        ({"at": (NOW + timedelta(hours=2)).isoformat()}, 403, "in the future"),
        ({"actor": "bad id"}, 422, "not a valid user id"),
        ({"at": "yesterday"}, 422, "at"),
        ({"at": 1_700_000_000}, 422, "ISO-8601"),
        ({"kind": None}, 422, "kind"),
    ],
)
async def test_bad_interactions_are_refused_naming_the_event_and_buffer_nothing(
    client: httpx.AsyncClient, uid: UserIds, event: dict, status: int, expected: str
) -> None:
    """422 for what breaks the schema; 403 for the rules it cannot state (acting on oneself,
    a time ahead of the server's clock)."""
    me, a = uid("me"), uid("a")
    good = {"actor": me, "target": a, "kind": "like", "at": NOW.isoformat()}
    bad = good | event
    if bad["target"] == "SELF":
        bad["target"] = me
    backlog = await service_of(client).interactions.buffer.backlog()
    response = await client.post("/v1/interactions", json=[good, good, bad])
    assert response.status_code == status, response.text
    message = response.json()["error"]["message"]
    assert expected in message and "2" in message
    assert await service_of(client).interactions.buffer.backlog() == backlog


async def test_interaction_batches_hold_1_to_1000_events(
    make_client: MakeClient, uid: UserIds
) -> None:
    async with make_client(interactions_pair_daily_max=10_000) as client:
        await batches_of_1_to_1000(client, uid("me"), uid("a"))


async def batches_of_1_to_1000(client: httpx.AsyncClient, me: str, a: str) -> None:
    await exist(client, me, a)
    event = {"actor": me, "target": a, "kind": "like", "at": now().isoformat()}
    assert (await client.post("/v1/interactions", json=[event] * 1000)).status_code == 202
    for body, expected in (([], "1 to 1000"), ([event] * 1001, "at most 1000 items")):
        response = await client.post("/v1/interactions", json=body)
        assert response.status_code == 422
        message = response.json()["error"]["message"]
        assert expected in message and len(message) < 300  # the list is never repeated
    await service_of(client).interaction_flusher.flush_all()
    assert await affinities(client, me) == pytest.approx({a: 2000.0}, rel=1e-4)


async def test_friends_are_ordered_closest_first(client: httpx.AsyncClient, uid: UserIds) -> None:
    me = uid("me")
    friends = [uid(f"f{n}") for n in range(4)]
    for friend in friends:
        await follow(client, (me, friend), (friend, me))
    await interact(
        client,
        (me, friends[0], "like", NOW),  # 2
        (friends[2], me, "message", NOW),  # 5
        (me, friends[1], "profile_visit", NOW),  # 1
    )
    # closest first; friends[3] (no interactions) last
    assert await ids(client, me, "friends") == [friends[2], friends[0], friends[1], friends[3]]
    pages = []
    cursor = None
    while True:
        params = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        body = (await client.get(f"/v1/users/{me}/friends", params=params)).json()
        pages += [item["user_id"] for item in body["items"]]
        assert all(set(item) == {"user_id", "since"} for item in body["items"])  # hidden
        if not (cursor := body["next_cursor"]):
            break
        fields = cursor_fields(cursor)
        assert fields[:3] == ["3", "friends", me] and fields[4:] == [pages[-1]]
        assert fields[3].isdigit()  # the follow time: the only number a cursor holds
    assert pages == [friends[2], friends[0], friends[1], friends[3]]


async def test_a_friends_walk_goes_on_after_its_position_is_unfollowed(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    """The position's affinity is found again from the interactions, friend or not."""
    me = uid("me")
    friends = [uid(f"f{n}") for n in range(3)]
    for friend in friends:
        await follow(client, (me, friend), (friend, me))
    await interact(client, (friends[0], me, "message", NOW), (me, friends[1], "like", NOW))
    first = (await client.get(f"/v1/users/{me}/friends", params={"limit": 1})).json()
    assert [item["user_id"] for item in first["items"]] == [friends[0]]
    await client.delete(f"/v1/users/{me}/following/{friends[0]}")
    params = {"limit": 5, "cursor": first["next_cursor"]}
    rest = (await client.get(f"/v1/users/{me}/friends", params=params)).json()
    assert [item["user_id"] for item in rest["items"]] == [friends[1], friends[2]]


def cursor_fields(cursor: str) -> list[str]:
    """A cursor's signed payload, split: a version, the list, and the position only."""
    body = cursor.partition(".")[0]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode().split("|")


# -- suggestions ----------------------------------------------------------------------------------


async def test_suggestions_with_reasons_and_exclusions(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    me, close, other, fan = uid("me"), uid("close"), uid("other"), uid("fan")
    cand = {n: uid(n) for n in ("both", "close-only", "other-only", "blocked", "blocker",
                                "spam", "dismissed", "followed")}  # fmt: skip
    await follow(client, (me, close), (me, other), (fan, me), (me, cand["followed"]))
    for name, user in cand.items():
        if name != "other-only":
            await follow(client, (close, user))
        if name in ("both", "other-only"):
            await follow(client, (other, user))
    await interact(client, (me, close, "message", NOW))
    await client.put(f"/v1/users/{me}/blocks/{cand['blocked']}")
    await client.put(f"/v1/users/{cand['blocker']}/blocks/{me}")
    await client.put(f"/v1/users/{cand['spam']}/status", json={"status": "spam"})
    await service_of(client).jobs.drain()
    response = await client.delete(f"/v1/users/{me}/suggestions/{cand['dismissed']}")
    assert response.json() == {"dismissed": True, "created": True}

    items = await suggested(client, me)
    found = by_id(items)
    for excluded in ("blocked", "blocker", "spam", "dismissed", "followed"):
        assert cand[excluded] not in found, excluded
    assert me not in found and close not in found and other not in found
    assert found[cand["both"]]["reasons"] == {"mutual_count": 2, "via": [close, other]}
    assert found[cand["close-only"]]["reasons"] == {"mutual_count": 1, "via": [close]}
    assert found[cand["other-only"]]["reasons"] == {"mutual_count": 1, "via": [other]}
    assert found[fan]["sources"] == ["follows_you"]
    # close also follows `followed`, as I do: a co-follower, whose follows are candidates too
    assert found[cand["both"]]["sources"] == ["co_followers", "friends_of_friends"]
    # two paths beat one; a close intermediary beats a distant one
    ranked = [item["user_id"] for item in items]
    assert ranked.index(cand["both"]) < ranked.index(cand["close-only"])
    assert ranked.index(cand["close-only"]) < ranked.index(cand["other-only"])


async def test_a_celebrity_intermediary_counts_little(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    me, friend, celebrity = uid("me"), uid("friend"), uid("celebrity")
    via_friend, via_celebrity = uid("via-friend"), uid("via-celebrity")
    fans = [uid(f"fan{n}") for n in range(300)]
    await backends.neo4j.bulk.load_users(fans)
    await backends.neo4j.bulk.load_edges([{"s": f, "d": celebrity, "t": 1} for f in fans])
    await follow(client, (me, friend), (me, celebrity))
    await follow(client, (friend, via_friend), (celebrity, via_celebrity))
    ranked = [item["user_id"] for item in await suggested(client, me)]
    assert ranked.index(via_friend) < ranked.index(via_celebrity)


async def test_the_cache_is_invalidated_by_follow_dismiss_and_block(
    client: httpx.AsyncClient, backends: Services, uid: UserIds
) -> None:
    me, friend = uid("me"), uid("friend")
    a, b, c, d = uid("a"), uid("b"), uid("c"), uid("d")
    await follow(client, (me, friend), (friend, a), (friend, b), (friend, c), (friend, d))
    assert {a, b, c, d} <= set(by_id(await suggested(client, me)))
    # a write that bypasses the service is not seen until the cache expires: it is a cache
    await backends.neo4j.edges.follow(me, d)
    assert d in by_id(await suggested(client, me))
    await follow(client, (me, a))
    after_follow = by_id(await suggested(client, me))
    assert a not in after_follow and d not in after_follow
    await client.delete(f"/v1/users/{me}/suggestions/{b}")
    assert b not in by_id(await suggested(client, me))
    await client.put(f"/v1/users/{c}/blocks/{me}")  # a block by the other side, too
    assert c not in by_id(await suggested(client, me))


async def test_cold_start_suggests_recently_active_then_popular_accounts(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    newcomer, fresh, followed = uid("newcomer"), uid("fresh"), uid("followed")
    await follow(client, (fresh, followed))  # the newest edge of the graph: fresh is active
    services = service_of(client)  # the shared lists are cached: drop the one of a former run
    await services.redis.client.delete(f"{services.settings.redis_prefix}accounts:recent")
    items = await suggested(client, newcomer, limit=50)
    sources = [item["sources"] for item in items]
    assert items[0]["user_id"] == fresh and sources[0] == ["recently_active"]
    assert set(map(tuple, sources)) <= {("recently_active",), ("popular",)}
    assert sources == sorted(sources, key=lambda s: s != ["recently_active"])  # recent first
    assert all(item["reasons"] == {"mutual_count": 0, "via": []} for item in items)
    top = items[0]["user_id"]
    await client.put(f"/v1/users/{newcomer}/blocks/{top}")
    assert top not in by_id(await suggested(client, newcomer, limit=5))


async def test_suggestions_bad_input(client: httpx.AsyncClient, uid: UserIds) -> None:
    me = uid("me")
    for limit in (0, 51):
        response = await client.get(f"/v1/users/{me}/suggestions", params={"limit": limit})
        assert response.status_code == 422
    assert (await client.get("/v1/users/bad id/suggestions")).status_code == 422
    dismiss_self = await client.delete(f"/v1/users/{me}/suggestions/{me}")
    assert dismiss_self.status_code == 403 and dismiss_self.json()["error"]["code"] == "self_action"
    assert (await client.get("/v1/internal/users/bad id/affinities")).status_code == 422


async def test_racing_flushers_apply_every_event_once(
    make_service: Callable[..., Services], uid: UserIds
) -> None:
    """Several processes flush at once, in different batch sizes: each event counts once."""
    me, a = uid("me"), uid("a")
    t = _micros(now())
    services = [make_service(interactions_flush_entries=n) for n in (1, 2, 50)]
    await services[0].neo4j.bulk.load_users([me, a])
    await services[0].interaction_flusher.flush_all()
    for n in range(12):
        await services[n % 3].interactions.record_raw([(me, a, 1.0, t)] * (n + 1))
    for _ in range(4):
        await asyncio.gather(*(s.interaction_flusher.flush() for s in services))
    await services[0].interaction_flusher.flush_all()
    assert await services[0].interactions.affinities(me, 10) == [(a, pytest.approx(78.0, rel=1e-4))]


async def test_erasing_a_user_with_interactions_and_dismissals(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    gone, friend, other = uid("gone"), uid("friend"), uid("other")
    await follow(client, (gone, friend), (friend, gone), (other, friend))
    await interact(client, (gone, friend, "message", now()), (other, gone, "like", now()))
    await client.delete(f"/v1/users/{gone}/suggestions/{other}")
    await client.delete(f"/v1/users/{other}/suggestions/{gone}")
    assert (await client.delete(f"/v1/users/{gone}")).status_code == 202
    await service_of(client).jobs.drain()
    body = (await client.get(f"/v1/users/{gone}/status")).json()
    assert body["exists"] is False and body["erasing"] is False
    assert await affinities(client, friend) == {}
    assert await affinities(client, other) == {}
