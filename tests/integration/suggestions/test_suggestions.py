"""People you may know on the real servers: interactions, affinity, suggestions, dismissals."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.edge_writes import WriteKind
from graphsvc.wire.schemas import DismissBody, Reasons
from tests.support.driver import Driver, refused
from tests.support.stores import commit_only
from tests.support.times import now

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


# For parameters only: tests take the time when they run (affinity decays meanwhile).
NOW = now()


# -- interactions and affinity ------------------------------------------------------------------


async def test_affinity_decays_with_the_configured_half_life(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    me, a, b = uid("me"), uid("a"), uid("b")
    async with make_driver(affinity_half_life_days=7) as driver:
        await driver.services.core.neo4j.bulk.load_users([me, a, b])
        t = now()
        await driver.interact(
            (me, a, "message", t - timedelta(days=7)),  # 5 -> 2.5
            (a, me, "comment", t - timedelta(days=14)),  # 3 -> 0.75 (affinity is both ways)
            (me, b, "profile_visit", t),  # 1
            (me, b, "like", t - timedelta(days=21)),  # 2 -> 0.25
        )
        found = await driver.affinity_of(me)
    assert found == pytest.approx({a: 3.25, b: 1.25}, rel=2e-5)  # a second of decay is 1e-6
    assert list(found) == [a, b]  # closest first


async def test_events_apply_exactly_once_and_survive_a_restart(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    me, a = uid("me"), uid("a")
    await backends.core.neo4j.bulk.load_users([me, a])
    t = now()
    first = make_service()
    await first.background.interaction_flusher.flush_all()
    await first.interactions.record_raw([(me, a, 5.0, _micros(t))])
    # The process stops after Neo4j applied the batch, before the buffer was trimmed.
    last = await backends.core.neo4j.suggestions.interactions_checkpoint()
    batches = await first.interactions.buffer.read_after(last, 10)
    await backends.core.neo4j.suggestions.apply_interactions(
        [{"a": me, "b": a, "w": 5.0, "at": _micros(t), "raw": 5.0, "day": -1}],
        checkpoint=last,
        last=batches[-1].entry_id,
        half_life_us=first.settings.interactions.affinity_half_life_us,
        daily_max=first.settings.bounds.interactions_pair_daily_max,
    )
    restarted = make_service()  # a new process: nothing in memory, the buffer in Redis
    await restarted.interactions.record_raw([(a, me, 2.0, _micros(t))])
    await restarted.background.interaction_flusher.flush_all()
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
    client: httpx.AsyncClient, driver: Driver, uid: UserIds, event: dict, status: int, expected: str
) -> None:
    """422 for what breaks the schema; 403 for the rules it cannot state (acting on oneself,
    a time ahead of the server's clock)."""
    me, a = uid("me"), uid("a")
    good = {"actor": me, "target": a, "kind": "like", "at": NOW.isoformat()}
    bad = good | event
    if bad["target"] == "SELF":
        bad["target"] = me
    backlog = await driver.services.interactions.buffer.backlog()
    response = await client.post("/v1/interactions", json=[good, good, bad])
    assert response.status_code == status, response.text
    message = response.json()["error"]["message"]
    assert expected in message and "2" in message
    assert await driver.services.interactions.buffer.backlog() == backlog


async def test_interaction_batches_hold_1_to_1000_events(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    async with make_driver(interactions_pair_daily_max=10_000) as driver:
        await batches_of_1_to_1000(driver, uid("me"), uid("a"))


async def batches_of_1_to_1000(driver: Driver, me: str, a: str) -> None:
    await driver.services.core.neo4j.bulk.load_users([me, a])
    event = {"actor": me, "target": a, "kind": "like", "at": now().isoformat()}
    assert (await driver.http.post("/v1/interactions", json=[event] * 1000)).status_code == 202
    for body, expected in (([], "1 to 1000"), ([event] * 1001, "at most 1000 items")):
        response = await driver.http.post("/v1/interactions", json=body)
        assert response.status_code == 422
        message = response.json()["error"]["message"]
        assert expected in message and len(message) < 300  # the list is never repeated
    await driver.services.background.interaction_flusher.flush_all()
    assert await driver.affinity_of(me) == pytest.approx({a: 2000.0}, rel=1e-4)


async def test_friends_are_ordered_closest_first(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    me = uid("me")
    friends = [uid(f"f{n}") for n in range(4)]
    for friend in friends:
        await driver.follow_pairs((me, friend), (friend, me))
    await driver.interact(
        (me, friends[0], "like", NOW),  # 2
        (friends[2], me, "message", NOW),  # 5
        (me, friends[1], "profile_visit", NOW),  # 1
    )
    # closest first; friends[3] (no interactions) last
    assert await driver.ids(me, "friends") == [friends[2], friends[0], friends[1], friends[3]]
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
        assert fields[:3] == ["4", "friends", me] and fields[4:] == [pages[-1]]
        assert fields[3].isdigit()  # the follow time: the only number a cursor holds
    assert pages == [friends[2], friends[0], friends[1], friends[3]]


async def test_a_friends_walk_goes_on_after_its_position_is_unfollowed(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    """The position's affinity is found again from the interactions, friend or not."""
    me = uid("me")
    friends = [uid(f"f{n}") for n in range(3)]
    for friend in friends:
        await driver.follow_pairs((me, friend), (friend, me))
    await driver.interact((friends[0], me, "message", NOW), (me, friends[1], "like", NOW))
    first = (await client.get(f"/v1/users/{me}/friends", params={"limit": 1})).json()
    assert [item["user_id"] for item in first["items"]] == [friends[0]]
    await driver.unfollow(me, friends[0])
    params = {"limit": 5, "cursor": first["next_cursor"]}
    rest = (await client.get(f"/v1/users/{me}/friends", params=params)).json()
    assert [item["user_id"] for item in rest["items"]] == [friends[1], friends[2]]


def cursor_fields(cursor: str) -> list[str]:
    """A cursor's signed payload, split: a version, the list, and the position only."""
    body = cursor.partition(".")[0]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode().split("|")


# -- suggestions ----------------------------------------------------------------------------------


async def test_suggestions_with_reasons_and_exclusions(driver: Driver, uid: UserIds) -> None:
    me, close, other, fan = uid("me"), uid("close"), uid("other"), uid("fan")
    cand = {
        n: uid(n)
        for n in (
            "both",
            "close-only",
            "other-only",
            "blocked",
            "blocker",
            "spam",
            "dismissed",
            "followed",
        )
    }
    await driver.follow_pairs((me, close), (me, other), (fan, me), (me, cand["followed"]))
    for name, user in cand.items():
        if name != "other-only":
            await driver.follow_pairs((close, user))
        if name in ("both", "other-only"):
            await driver.follow_pairs((other, user))
    await driver.interact((me, close, "message", NOW))
    await driver.block(me, cand["blocked"])
    await driver.block(cand["blocker"], me)
    await driver.set_status(cand["spam"], "spam")
    await driver.drain()
    response = await driver.dismiss(me, cand["dismissed"])
    assert response == DismissBody(dismissed=True, created=True)

    found = await driver.suggested(me)
    for excluded in ("blocked", "blocker", "spam", "dismissed", "followed"):
        assert cand[excluded] not in found, excluded
    assert me not in found and close not in found and other not in found
    assert found[cand["both"]].reasons == Reasons(mutual_count=2, via=[close, other])
    assert found[cand["close-only"]].reasons == Reasons(mutual_count=1, via=[close])
    assert found[cand["other-only"]].reasons == Reasons(mutual_count=1, via=[other])
    assert found[fan].sources == ["follows_you"]
    # close also follows `followed`, as I do: a co-follower, whose follows are candidates too;
    # the random walks from me pass through my two follows to it as well
    assert found[cand["both"]].sources == ["co_followers", "friends_of_friends", "walks"]
    # two paths beat one; a close intermediary beats a distant one
    ranked = list(found)
    assert ranked.index(cand["both"]) < ranked.index(cand["close-only"])
    assert ranked.index(cand["close-only"]) < ranked.index(cand["other-only"])


async def test_a_celebrity_intermediary_counts_little(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    me, friend, celebrity = uid("me"), uid("friend"), uid("celebrity")
    via_friend, via_celebrity = uid("via-friend"), uid("via-celebrity")
    fans = [uid(f"fan{n}") for n in range(300)]
    await backends.core.neo4j.bulk.load_users([*fans, celebrity])  # an edge needs both of its users
    assert await backends.core.neo4j.bulk.load_edges(
        [{"s": f, "d": celebrity, "t": 1} for f in fans]
    ) == len(fans)
    await driver.follow_pairs((me, friend), (me, celebrity))
    await driver.follow_pairs((friend, via_friend), (celebrity, via_celebrity))
    ranked = list(await driver.suggested(me))
    assert ranked.index(via_friend) < ranked.index(via_celebrity)


async def test_the_cache_is_invalidated_by_follow_dismiss_and_block(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    me, friend = uid("me"), uid("friend")
    a, b, c, d = uid("a"), uid("b"), uid("c"), uid("d")
    await driver.follow_pairs((me, friend), (friend, a), (friend, b), (friend, c), (friend, d))
    assert {a, b, c, d} <= set(await driver.suggested(me))
    # a write that bypasses the service is not seen until the cache expires: it is a cache
    await commit_only(backends, WriteKind.FOLLOW, me, d)
    assert d in await driver.suggested(me)
    await driver.follow_pairs((me, a))
    after_follow = await driver.suggested(me)
    assert a not in after_follow and d not in after_follow
    await driver.dismiss(me, b)
    assert b not in await driver.suggested(me)
    await driver.block(c, me)  # a block by the other side, too
    assert c not in await driver.suggested(me)


async def test_suggestions_bad_input(
    client: httpx.AsyncClient, driver: Driver, uid: UserIds
) -> None:
    me = uid("me")
    for limit in (0, 51):
        response = await client.get(f"/v1/users/{me}/suggestions", params={"limit": limit})
        assert response.status_code == 422
    assert (await client.get("/v1/users/bad id/suggestions")).status_code == 422
    await refused(driver.dismiss(me, me), 403, "self_action")
    assert (await client.get("/v1/internal/users/bad id/affinities")).status_code == 422


async def test_racing_flushers_apply_every_event_once(
    make_service: Callable[..., Services], uid: UserIds
) -> None:
    """Several processes flush at once, in different batch sizes: each event counts once."""
    me, a = uid("me"), uid("a")
    t = _micros(now())
    services = [make_service(interactions_flush_entries=n) for n in (1, 2, 50)]
    await services[0].core.neo4j.bulk.load_users([me, a])
    await services[0].background.interaction_flusher.flush_all()
    for n in range(12):
        await services[n % 3].interactions.record_raw([(me, a, 1.0, t)] * (n + 1))
    for _ in range(4):
        await asyncio.gather(*(s.background.interaction_flusher.flush() for s in services))
    await services[0].background.interaction_flusher.flush_all()
    assert await services[0].interactions.affinities(me, 10) == [(a, pytest.approx(78.0, rel=1e-4))]


async def test_erasing_a_user_with_interactions_and_dismissals(
    driver: Driver, uid: UserIds
) -> None:
    gone, friend, other = uid("gone"), uid("friend"), uid("other")
    await driver.follow_pairs((gone, friend), (friend, gone), (other, friend))
    await driver.interact((gone, friend, "message", now()), (other, gone, "like", now()))
    await driver.dismiss(gone, other)
    await driver.dismiss(other, gone)
    assert (await driver.erase(gone)).state == "erasing"
    await driver.drain()
    body = await driver.status(gone)
    assert body.exists is False and body.erasing is False
    assert await driver.affinity_of(friend) == {}
    assert await driver.affinity_of(other) == {}
