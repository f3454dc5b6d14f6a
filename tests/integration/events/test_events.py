"""The event stream (graph:events) and its Neo4j outbox; writes and reads while Redis is down;
the Server-Sent Events of new followers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import orjson
import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import NewKey, Scope
from graphsvc.domain.edge_writes import WriteKind
from graphsvc.domain.model import GraphEvent
from graphsvc.domain.privacy import PrivacyEdit
from graphsvc.settings import Settings
from tests.support import events
from tests.support.driver import Driver, eventually
from tests.support.events import events_after, next_event, next_follower, serving
from tests.support.helpers import ThrowawayRedis, app_in_process, bearer
from tests.support.run import RUN
from tests.support.stores import commit_only, relay_due

UserIds = Callable[[str], str]


def shape(events: list[dict]) -> list[tuple[str, ...]]:
    return [
        (e["type"], e["src"], e["dst"], e.get("status", ""), e.get("cause", "")) for e in events
    ]


async def test_every_effective_change_is_one_event(service: Services, uid: UserIds) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    start = await service.core.redis.stream.last_id()
    assert (await service.relations.follow(a, b)).created
    assert not (await service.relations.follow(a, b)).created  # a repeat changes nothing: no event
    assert (await service.relations.unfollow(a, b)).changed
    assert not (await service.relations.unfollow(a, b)).changed
    assert (await service.relations.follow(b, a)).created
    await service.relations.follow(a, c)
    await service.relations.block(a, b)  # removes b -> a
    await service.relations.block(a, b)  # already blocked: nothing
    assert await service.relations.unblock(a, b)
    assert not await service.relations.unblock(a, b)
    await service.moderation.set_status(c, "spam")
    await service.moderation.set_status(c, "spam")
    assert await service.moderation.erase(c)
    await service.core.jobs.drain()

    events = await events_after(service, start, {a, b, c})
    assert shape(events) == [
        ("follow", a, b, "", ""),
        ("unfollow", a, b, "", ""),
        ("follow", b, a, "", ""),
        ("follow", a, c, "", ""),
        ("block", a, b, "", ""),
        ("unfollow", b, a, "", "block"),
        ("severed", b, a, "", "block"),  # the blocker lost a follower (b is told nothing)
        ("unblock", a, b, "", ""),
        ("status", c, "", "spam", ""),
        ("erase", c, "", "", ""),
    ]
    assert len({e["id"] for e in events}) == len(events)
    (severed,) = [e for e in events if e["type"] == "severed"]
    assert (severed["followers"], severed["following"]) == ("1", "0")
    by_a = [int(e["version"]) for e in events if e["src"] == a]
    assert by_a == sorted(by_a) and len(set(by_a)) == len(by_a)


async def test_relay_appends_an_event_whose_append_was_lost_and_repairs_its_users(
    service: Services, backends: Services, uid: UserIds
) -> None:
    x, y, z = uid("x"), uid("y"), uid("z")
    await service.relations.follow(z, y)
    assert (await service.follow_pages.counts(y)).followers == 1  # y's mirror is warm
    start = await service.core.redis.stream.last_id()

    # The process "dies" between the commit and the mirror write: only Neo4j has the follow.
    await commit_only(backends, WriteKind.FOLLOW, x, y)
    drifts = await backends.consistency.check([x, y])
    assert drifts, "the lost mirror write must show as drift"
    assert await events_after(service, start, {x, y}) == []

    report = await relay_due(service)
    assert report.recovered >= 1 and report.repaired >= 2
    assert await backends.consistency.check([x, y]) == []
    assert (await service.follow_pages.counts(y)).followers == 2
    assert shape(await events_after(service, start, {x, y})) == [("follow", x, y, "", "")]

    # A normal write appends its own event; the relay then only forgets it (no repeat).
    mark = await service.core.redis.stream.last_id()
    await service.relations.follow(x, z)
    before = await relay_due(service)
    assert before.delivered >= 1
    assert shape(await events_after(service, mark, {x, z})) == [("follow", x, z, "", "")]
    assert await relay_due(service) == type(before)()  # the outbox is empty


# -- Redis down (a throwaway redis-server of this module's own, killed with SIGKILL) ----------


async def test_redis_down_writes_commit_reads_fall_back_and_the_relay_repairs(
    server_settings: Settings, throwaway_redis: ThrowawayRedis, service_key: str
) -> None:
    settings = throwaway_redis.settings(server_settings, "rd:", redis_retry_seconds=0.2)
    run = os.urandom(4).hex()
    a, b, c, star = (f"rd{run}.{name}" for name in ("a", "b", "c", "star"))
    async with app_in_process(settings, service_key) as (service, http):
        graph = Driver(http)
        await graph.follow_pairs((a, star), (b, star))
        warm = await http.get(f"/v1/users/{star}/followers")
        assert warm.status_code == 200 and "x-graph-source" not in warm.headers

        throwaway_redis.kill9()
        assert (await graph.follow(c, star)).created  # committed in Neo4j
        assert (await graph.unfollow(a, star)).removed
        page = await http.get(f"/v1/users/{star}/followers")
        assert page.status_code == 200 and page.headers["x-graph-source"] == "neo4j"
        assert [i["user_id"] for i in page.json()["items"]] == [c, b]
        counts = await http.get(f"/v1/users/{star}/counts")
        assert counts.status_code == 200 and counts.headers["x-graph-source"] == "neo4j"
        assert counts.json()["followers"] == 2
        await graph.suggestions(c)
        assert (await http.get("/healthz")).json() == {"neo4j": "ok", "redis": "unavailable"}

        throwaway_redis.start()  # empty
        await asyncio.sleep(0.3)  # the breaker closes
        report = await relay_due(service)
        assert report.recovered >= 2
        users = [a, b, c, star]
        assert await service.consistency.check(users) == []
        events = await events_after(service, "0-0", set(users))
        assert ("follow", c, star, "", "") in shape(events)
        assert ("unfollow", a, star, "", "") in shape(events)
        page = await http.get(f"/v1/users/{star}/followers")
        assert "x-graph-source" not in page.headers
        assert [i["user_id"] for i in page.json()["items"]] == [c, b]


# -- Server-Sent Events -------------------------------------------------------------------------


served = events.served_app


async def test_new_followers_are_pushed_and_replayed_after_a_reconnect(
    served: str, service: Services, service_key: str, uid: UserIds
) -> None:
    star, f0, f1, f2, f3 = uid("star"), uid("f0"), uid("f1"), uid("f2"), uid("f3")
    other = uid("other")
    async with httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key)) as http:
        async with http.stream("GET", f"/v1/users/{star}/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            await service.relations.follow(f1, other)  # someone else's follower: not pushed
            await service.relations.follow(f1, star)
            first_id, data = await asyncio.wait_for(next_follower(lines), 10)
            pushed = orjson.loads(data)
            assert pushed["follower"] == f1
            # The relay may append an event twice: the connection gets it once.
            again = GraphEvent(pushed["event_id"], "follow", f1, star, 1)
            await service.core.redis.stream.append([again])
            await service.relations.follow(f0, star)
            last_id, data = await asyncio.wait_for(next_follower(lines), 10)
            assert orjson.loads(data)["follower"] == f0
        await service.relations.follow(f2, star)
        await service.relations.follow(f3, star)
        headers = {"Last-Event-ID": last_id}
        async with http.stream("GET", f"/v1/users/{star}/events", headers=headers) as response:
            lines = response.aiter_lines()
            seen = [await asyncio.wait_for(next_follower(lines), 10) for _ in range(2)]
            followers = [orjson.loads(data)["follower"] for _, data in seen]
            assert followers == [f2, f3]
            ids = [first_id, last_id, seen[0][0], seen[1][0]]
            assert sorted(ids, key=lambda i: tuple(map(int, i.split("-")))) == ids
        bad = await http.get(f"/v1/users/{star}/events", headers={"Last-Event-ID": "nope"})
        assert bad.status_code == 400 and "Last-Event-ID" in bad.json()["error"]["message"]


async def test_a_locked_user_is_pushed_its_follow_requests_and_then_the_approved_follower(
    served: str, service: Services, service_key: str, uid: UserIds
) -> None:
    owner, fan = uid("owner"), uid("fan")
    await service.privacy.update(owner, PrivacyEdit(locked=True))
    http = httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key))
    async with http, http.stream("GET", f"/v1/users/{owner}/events") as response:
        lines = response.aiter_lines()
        assert await anext(lines) == ": connected"
        await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
        assert (await service.relations.follow(fan, owner)).requested
        event, _, data = await asyncio.wait_for(next_event(lines), 10)
        assert (event, orjson.loads(data)["requester"]) == ("follow_request", fan)
        assert await service.relations.approve(owner, fan)
        _, data = await asyncio.wait_for(next_follower(lines), 10)
        assert orjson.loads(data)["follower"] == fan


async def followers_told(lines: AsyncIterator[str], count: int) -> list[str]:
    return [
        orjson.loads(data)["follower"]
        for _, data in [await asyncio.wait_for(next_follower(lines), 10) for _ in range(count)]
    ]


async def test_suspended_and_spam_followers_reach_no_stream_live_or_replayed(
    served: str, service: Services, service_key: str, uid: UserIds
) -> None:
    star, spam, suspended, fan, fan2 = (uid(n) for n in ("star", "spam", "susp", "fan", "fan2"))
    await service.moderation.set_status(spam, "spam")
    before = await service.core.redis.stream.last_id()
    await service.relations.follow(suspended, star)
    await service.moderation.set_status(suspended, "suspended")  # after its event
    http = httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key))
    async with http:
        async with http.stream("GET", events_path(star)) as response:
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            assert (await service.relations.follow(spam, star)).created  # in the shadow
            # An event the relay appends late, its actor suspended since.
            await service.core.redis.stream.append(
                [GraphEvent(f"ev-{suspended}-late", "follow", suspended, star, 1)]
            )
            await service.relations.follow(fan, star)
            assert await followers_told(lines, 1) == [fan]
        async with http.stream("GET", events_path(star), headers={"Last-Event-ID": before}) as got:
            lines = got.aiter_lines()
            assert await followers_told(lines, 1) == [fan]
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            await service.relations.follow(fan2, star)
            assert await followers_told(lines, 1) == [fan2]  # nothing else was replayed
        # The spam user's own stream (its new followers) is told as any user's.
        async with http.stream("GET", events_path(spam)) as response:
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            await service.relations.follow(fan, spam)
            assert await followers_told(lines, 1) == [fan]
    followers = await service.follow_pages.followers(star)
    assert [entry.user_id for entry in followers.items] == [fan2, fan]  # as the list shows


async def test_requests_and_approvals_of_inactive_users_reach_no_locked_stream(
    served: str, service: Services, service_key: str, uid: UserIds
) -> None:
    owner, spam, spam2, suspended, fan = (uid(n) for n in ("own", "spam", "spam2", "susp", "fan"))
    await service.privacy.update(owner, PrivacyEdit(locked=True))
    for user in (spam, spam2):
        await service.moderation.set_status(user, "spam")
    before = await service.core.redis.stream.last_id()
    assert (await service.relations.follow(suspended, owner)).requested
    await service.moderation.set_status(suspended, "suspended")  # after its request
    http = httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key))
    async with http:
        async with http.stream("GET", events_path(owner)) as response:
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            assert (await service.relations.follow(spam, owner)).requested
            assert await service.relations.approve(owner, spam)
            assert (await service.relations.follow(spam2, owner)).requested
            assert (await service.relations.follow(fan, owner)).requested
            event, _, data = await asyncio.wait_for(next_event(lines), 10)
            assert (event, orjson.loads(data)["requester"]) == ("follow_request", fan)
            await service.follow_requests.approve_all(owner)  # fan, spam2 (suspended: refused)
            await service.core.jobs.drain()
            assert await followers_told(lines, 1) == [fan]  # the approved follow
        # The replay leaves out the same: the suspended user's request, every spam event.
        async with http.stream("GET", events_path(owner), headers={"Last-Event-ID": before}) as got:
            lines = got.aiter_lines()
            told = [await asyncio.wait_for(next_event(lines), 10) for _ in range(2)]
            assert [event for event, _, _ in told] == ["follow_request", "follower"]
            assert orjson.loads(told[0][2])["requester"] == orjson.loads(told[1][2])["follower"]
            assert orjson.loads(told[1][2])["follower"] == fan
            await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
            late = uid("late")
            assert (await service.relations.follow(late, owner)).requested
            event, _, data = await asyncio.wait_for(next_event(lines), 10)
            assert (event, orjson.loads(data)["requester"]) == ("follow_request", late)


async def test_a_consumer_group_reads_each_change_as_the_readme_shows(
    service: Services, uid: UserIds
) -> None:
    client, stream = service.core.redis.client, service.core.redis.stream.stream
    group = f"readme-{uid('group')}"
    await client.xgroup_create(stream, group, id="$", mkstream=True)
    try:
        a, b = uid("a"), uid("b")
        await service.relations.follow(a, b)
        await service.relations.unfollow(a, b)
        got: list[dict] = []
        while reply := await client.xreadgroup(group, "worker-1", {stream: ">"}, count=100):
            for entry_id, event in reply[0][1]:
                got.append(event)
                await client.xack(stream, group, entry_id)
        mine = [(e["type"], e["src"], e["dst"]) for e in got if e["src"] == a]
        assert mine == [("follow", a, b), ("unfollow", a, b)]
        assert (await client.xpending(stream, group))["pending"] == 0
    finally:
        await client.xgroup_destroy(stream, group)


async def test_a_dead_pooled_connection_after_a_redis_restart_is_not_an_outage(
    server_settings: Settings, throwaway_redis: ThrowawayRedis, service_key: str
) -> None:
    settings = throwaway_redis.settings(server_settings, "rr:")
    user = f"rr{os.urandom(4).hex()}.star"
    async with app_in_process(settings, service_key) as (service, http):
        assert (await http.get(f"/v1/users/{user}/counts")).status_code == 200  # pooled
        throwaway_redis.kill9()
        throwaway_redis.start()  # the pooled connection is now dead
        response = await http.get(f"/v1/users/{user}/counts")
        assert response.status_code == 200
        assert "x-graph-source" not in response.headers  # retried on a new connection
        assert not service.core.breaker.open


# -- limits of the event streams (the policies of services/follower_events.py) ------------------

MakeService = Callable[..., Services]
U64 = 2**64 - 1


def events_path(user: str) -> str:
    return f"/v1/users/{user}/events"


async def read_key(backends: Services, name: str) -> NewKey:
    return await backends.access.create(frozenset({Scope.READ}), name=f"{name} {RUN}")


@asynccontextmanager
async def private_stream(make_service: MakeService, uid: UserIds, **settings: object):
    """A service whose event stream is its own (no other test's events in it), removed at
    the end."""
    service = make_service(events_stream=f"test-events:{uid('stream')}", **settings)
    stream = service.core.redis.stream.stream
    try:
        yield service
    finally:
        await service.core.redis.client.delete(stream, f"{{{stream}}}:acked")


async def follows_of(service: Services, star: str, fans: list[str]) -> None:
    """Append one follow event of each fan, as a write would."""
    await service.core.redis.stream.append(
        [GraphEvent(f"ev-{fan}", "follow", fan, star, n + 1) for n, fan in enumerate(fans)]
    )


async def admitted(http: httpx.AsyncClient, url: str, seconds: float = 5.0) -> None:
    """Wait until a stream at ``url`` is admitted (a closed stream frees its slot as soon as
    its server sees the client gone), and close it."""

    async def opens() -> bool:
        async with http.stream("GET", url) as response:
            assert response.status_code in (200, 429), response.status_code
            return response.status_code == 200

    await eventually(opens, seconds)


async def all_closed(service: Services, key_id: str) -> None:
    """Wait until the key holds no stream slot (a server frees one once it sees its client
    gone)."""
    slots = f"{service.settings.redis.redis_prefix}streams:{key_id}"

    async def freed() -> bool:
        return await service.core.redis.client.zcard(slots) == 0

    await eventually(freed, 5.0)


@pytest.mark.parametrize("where", ["here", "elsewhere"])
async def test_a_revoked_key_ends_its_open_streams(
    make_service: MakeService, backends: Services, uid: UserIds, where: str
) -> None:
    # Revoked through this process, its key ring forgets the key at once; through another
    # one, this process trusts its cached key for API_KEY_CACHE_SECONDS more.
    cache = 60.0 if where == "here" else 0.5
    service = make_service(events_recheck_seconds=0.2, api_key_cache_seconds=cache)
    revoking = service if where == "here" else backends
    star, fan = uid("star"), uid("fan")
    doomed, kept = await read_key(backends, "doomed stream"), await read_key(backends, "kept")
    async with serving(service) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        path = events_path(star)
        async with (
            http.stream("GET", path, headers=bearer(doomed.token)) as ending,
            http.stream("GET", path, headers=bearer(kept.token)) as going_on,
        ):
            assert ending.status_code == going_on.status_code == 200
            ended, lines = ending.aiter_lines(), going_on.aiter_lines()
            assert await anext(ended) == await anext(lines) == ": connected"
            assert await revoking.access.revoke(doomed.key.id)
            event, _, data = await asyncio.wait_for(next_event(ended), 5)
            assert event == "closed"
            assert orjson.loads(data)["code"] == "unauthenticated"
            with pytest.raises(StopAsyncIteration):  # the server ended the stream
                await asyncio.wait_for(anext(ended), 5)
            await service.relations.follow(fan, star)  # the other key's stream goes on
            _, data = await asyncio.wait_for(next_follower(lines), 10)
            assert orjson.loads(data)["follower"] == fan
        again = await http.get(path, headers=bearer(doomed.token))
        assert again.status_code == 401


async def test_open_streams_per_key_are_capped_across_processes(
    make_service: MakeService, backends: Services, uid: UserIds
) -> None:
    # Two API processes: their own services (home timelines, key rings) over the same Redis.
    caps = {"events_streams_per_key": 2, "events_recheck_seconds": 0.2}
    one, two = make_service(**caps), make_service(**caps)
    key = await read_key(backends, "capped streams")
    path = events_path(uid("star"))
    async with (
        serving(one) as first_url,
        serving(two) as second_url,
        httpx.AsyncClient(timeout=10, headers=bearer(key.token)) as http,
    ):
        async with (
            http.stream("GET", first_url + path) as first,
            http.stream("GET", second_url + path) as second,
        ):
            assert first.status_code == second.status_code == 200
            for url in (first_url, second_url):
                refused = await http.get(url + path)
                assert refused.status_code == 429
                error = refused.json()["error"]
                assert error["code"] == "stream_limit"
                assert "2 open event streams" in error["message"]
                assert refused.headers["retry-after"] == "1"  # three renewals of 0.2 s
        await admitted(http, second_url + path)  # closing one frees its slot

        # A process that stops leaves its slots behind; they lapse unrenewed.
        await all_closed(one, key.key.id)
        for stopped in ("stopped-1", "stopped-2"):
            held, _ = await one.core.redis.stream_slots.hold(key.key.id, stopped, 2, 0.5)
            assert held
        assert (await http.get(first_url + path)).status_code == 429
        await asyncio.sleep(0.6)
        await admitted(http, first_url + path, seconds=0.5)


async def test_a_resume_replays_the_newest_entries_and_is_charged_to_the_key(
    make_service: MakeService, backends: Services, uid: UserIds
) -> None:
    star, fans = uid("star"), [uid(f"fan{n}") for n in range(8)]
    limits = {
        "events_replay_max": 5,
        "events_replay_charge_entries": 2,
        "rate_limits_enabled": True,
        "rate_limit_reads": "1000/day",
    }
    async with private_stream(make_service, uid, **limits) as service:
        await follows_of(service, star, fans)
        key = await read_key(backends, "replay")
        async with (
            serving(service) as url,
            httpx.AsyncClient(base_url=url, timeout=10, headers=bearer(key.token)) as http,
        ):
            resume = {"Last-Event-ID": "0-0"}  # every entry of the stream came after it
            async with http.stream("GET", events_path(star), headers=resume) as response:
                assert response.status_code == 200
                # One request to open it, and one per two entries read: six (five, and one
                # that says older ones were skipped).
                assert response.headers["ratelimit-remaining"] == str(1000 - 1 - 3)
                lines = response.aiter_lines()
                event, gap_id, data = await asyncio.wait_for(next_event(lines), 10)
                assert event == "gap" and orjson.loads(data)["code"] == "replay_limit"
                got = [await asyncio.wait_for(next_follower(lines), 10) for _ in fans[3:]]
                assert [orjson.loads(data)["follower"] for _, data in got] == fans[3:]
            # Resuming from the gap's id misses nothing more: no gap, the same five.
            resume = {"Last-Event-ID": gap_id}
            async with http.stream("GET", events_path(star), headers=resume) as response:
                assert response.headers["ratelimit-remaining"] == str(1000 - 4 - 1 - 3)
                lines = response.aiter_lines()
                again = [await asyncio.wait_for(next_event(lines), 10) for _ in fans[3:]]
                assert [(event, event_id) for event, event_id, _ in again] == [
                    ("follower", event_id) for event_id, _ in got
                ]


async def test_a_replay_the_budget_cannot_pay_is_refused_before_the_stream_opens(
    make_service: MakeService, backends: Services, uid: UserIds
) -> None:
    star = uid("star")
    limits = {
        "events_replay_max": 5,
        "events_replay_charge_entries": 2,
        "rate_limits_enabled": True,
        "rate_limit_reads": "3/day",
    }
    async with private_stream(make_service, uid, **limits) as service:
        await follows_of(service, star, [uid(f"fan{n}") for n in range(8)])
        key = await read_key(backends, "poor replay")
        async with (
            serving(service) as url,
            httpx.AsyncClient(base_url=url, timeout=10, headers=bearer(key.token)) as http,
        ):
            # One read to open it, and three for its six entries: past the budget of three.
            refused = await http.get(events_path(star), headers={"Last-Event-ID": "0-0"})
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "rate_limited"
            assert "retry-after" in refused.headers
            await all_closed(service, key.key.id)  # its slot was given back


async def test_an_id_past_the_newest_entry_resumes_from_the_newest(
    make_service: MakeService, backends: Services, uid: UserIds
) -> None:
    star, early, fan = uid("star"), uid("early"), uid("fan")
    async with private_stream(make_service, uid) as service:
        await follows_of(service, star, [early])
        key = await read_key(backends, "future resume")
        async with (
            serving(service) as url,
            httpx.AsyncClient(base_url=url, timeout=10, headers=bearer(key.token)) as http,
        ):
            resume = {"Last-Event-ID": f"{U64}-{U64}"}
            async with http.stream("GET", events_path(star), headers=resume) as response:
                assert response.status_code == 200
                lines = response.aiter_lines()
                assert await anext(lines) == ": connected"
                await asyncio.sleep(0.2)  # the follower events' reader is at the stream's end
                await follows_of(service, star, [fan])
                _, data = await asyncio.wait_for(next_follower(lines), 10)
                assert orjson.loads(data)["follower"] == fan


async def test_a_last_event_id_redis_cannot_take_is_a_400_naming_the_header(
    served: str, service_key: str, uid: UserIds
) -> None:
    path = events_path(uid("star"))
    refused = [
        "nope",
        "1-2-3",
        "99999999999999999999-0",  # 20 digits, past 64 bits
        "99999999999999999999999-0",
        f"{U64 + 1}-0",
        f"0-{U64 + 1}",
        "1" * 5_000,
    ]
    async with httpx.AsyncClient(base_url=served, timeout=10, headers=bearer(service_key)) as http:
        for value in refused:
            response = await http.get(path, headers={"Last-Event-ID": value})
            assert response.status_code == 400, (value[:40], response.status_code)
            error = response.json()["error"]
            assert error["code"] == "invalid_last_event_id"
            assert error["message"].startswith("Last-Event-ID ")
            assert len(error["message"]) < 200  # a short prefix of the value, at most
