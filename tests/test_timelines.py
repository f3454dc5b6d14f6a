"""Home timelines against the real servers: push for ordinary authors, pull for celebrities,
merged on read; the timeline following the graph; switches at the threshold; a restart in the
middle of a fan-out; bad input.

Celebrities here have FEED_CELEBRITY_FOLLOWERS = 3 followers (and are pushed again below 2,
FEED_HYSTERESIS = 0.5), so a handful of users shows every case.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from graphsvc.bootstrap import Services
from graphsvc.settings import Settings
from tests.helpers import server_env, service_of, start_api, start_worker, stop_process

FEED = {"feed_celebrity_followers": 3, "feed_hysteresis": 0.5}
BASE = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
async def api(make_client: Callable[..., httpx.AsyncClient]) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(**FEED) as http:
        await service_of(http).timeline_events.prepare()
        yield http


def at(minutes: float) -> str:
    return (BASE + timedelta(minutes=minutes)).isoformat()


async def follow(api: httpx.AsyncClient, user: str, *targets: str) -> None:
    for target in targets:
        response = await api.put(f"/v1/users/{user}/following/{target}")
        assert response.status_code == 200, response.text


async def publish(api: httpx.AsyncClient, author: str, post: str, minutes: float) -> dict:
    response = await api.put(f"/v1/users/{author}/posts/{post}", json={"at": at(minutes)})
    assert response.status_code == 202, response.text
    return response.json()


async def settle(api: httpx.AsyncClient) -> None:
    """Fan-outs done and the event stream's entries applied."""
    services = service_of(api)
    await services.jobs.drain()
    await services.timeline_events.settle()
    await services.jobs.drain()


async def timeline(api: httpx.AsyncClient, reader: str, limit: int = 50) -> list[tuple[str, str]]:
    """The whole timeline as (author, post) pairs, walking every page."""
    found: list[dict] = []
    cursor = None
    while True:
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        response = await api.get(f"/v1/users/{reader}/timeline", params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        found += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    times = [(item["at"], item["author"], item["post_id"]) for item in found]
    assert times == sorted(times, reverse=True), "not newest first"
    pairs = [(item["author"], item["post_id"]) for item in found]
    assert len(pairs) == len(set(pairs)), f"a post shows twice: {pairs}"
    return pairs


async def test_ordinary_and_celebrity_posts_merge_newest_first(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    reader, ordinary, star = uid("reader"), uid("ordinary"), uid("star")
    fans = [uid("fan") for _ in range(3)]
    assert await timeline(api, reader) == []  # the reader reads: it is active from now on
    await follow(api, reader, ordinary, star)
    for fan in fans:
        await follow(api, fan, star)

    pushed = await publish(api, ordinary, "o1", 1)
    pulled = await publish(api, star, "s1", 2)
    await publish(api, ordinary, "o2", 3)
    assert (pushed["mode"], pulled["mode"]) == ("push", "pull")
    assert pulled["state"] == "done"  # O(1): nothing to fan out
    await settle(api)

    state = (await api.get(f"/v1/users/{ordinary}/posts/o1")).json()
    assert (state["state"], state["followers"], state["pushed"]) == ("done", 1, 1)
    assert await timeline(api, reader) == [(ordinary, "o2"), (star, "s1"), (ordinary, "o1")]
    # the celebrity's post is in no inbox: it is merged on read
    inbox = await service_of(api).redis.inboxes.inbox(reader)
    assert [p.member for p in inbox] == [f"{ordinary}|o2", f"{ordinary}|o1"]


async def test_pages_never_skip_or_repeat_while_posts_arrive(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    reader, ordinary, star = uid("reader"), uid("ordinary"), uid("star")
    await timeline(api, reader)
    await follow(api, reader, ordinary, star)
    for fan in [uid("fan") for _ in range(3)]:
        await follow(api, fan, star)
    for n in range(12):
        author = star if n % 3 == 0 else ordinary
        await publish(api, author, f"p{n}", n)
    await settle(api)

    seen: list[str] = []
    cursor = None
    arrived = 0
    while True:
        params = {"limit": 5} | ({"cursor": cursor} if cursor else {})
        body = (await api.get(f"/v1/users/{reader}/timeline", params=params)).json()
        seen += [item["post_id"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
        # new posts from both kinds of author arrive between pages
        await publish(api, ordinary, f"new{arrived}", 100 + arrived)
        await publish(api, star, f"newstar{arrived}", 100.5 + arrived)
        await settle(api)
        arrived += 1
    assert seen == [f"p{n}" for n in reversed(range(12))]
    assert arrived >= 2
    # the new posts are at the top of a fresh read
    top = await timeline(api, reader, limit=2)
    assert top[:2] == [(star, f"newstar{arrived - 1}"), (ordinary, f"new{arrived - 1}")]


async def test_follow_backfills_unfollow_and_block_remove(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    reader, author, other = uid("reader"), uid("author"), uid("other")
    for n in range(5):
        await publish(api, author, f"a{n}", n)
    await publish(api, other, "x0", 10)
    await timeline(api, reader)
    await follow(api, reader, author, other)
    await settle(api)
    store = service_of(api).redis.inboxes
    assert len(await store.inbox(reader)) == 6  # backfilled by the follow events
    assert [p for _, p in await timeline(api, reader)] == ["x0", "a4", "a3", "a2", "a1", "a0"]

    # an unfollow hides the author at once, and its posts leave the inbox once applied
    assert (await api.delete(f"/v1/users/{reader}/following/{author}")).status_code == 200
    assert await timeline(api, reader) == [(other, "x0")]
    await settle(api)
    assert [p.post_id for p in await store.inbox(reader)] == ["x0"]

    # a block either way removes the blocked author's posts too
    assert (await api.put(f"/v1/users/{other}/blocks/{reader}")).status_code == 200
    assert await timeline(api, reader) == []
    await settle(api)
    assert await store.inbox(reader) == []
    await publish(api, other, "x1", 11)
    await settle(api)
    assert await timeline(api, reader) == []


async def test_delete_removes_from_every_timeline(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    author, star = uid("author"), uid("star")
    readers = [uid("reader") for _ in range(2)]
    for reader in readers:
        await timeline(api, reader)
        await follow(api, reader, author, star)
    await follow(api, uid("fan"), star)  # the star's third follower: a celebrity
    await publish(api, author, "keep", 1)
    await publish(api, author, "gone", 2)
    await publish(api, star, "stargone", 3)
    await settle(api)
    store = service_of(api).redis.inboxes
    for reader in readers:
        assert len(await timeline(api, reader)) == 3

    for post_author, post in ((author, "gone"), (star, "stargone")):
        response = await api.delete(f"/v1/users/{post_author}/posts/{post}")
        assert response.status_code == 202, response.text
    for reader in readers:  # hidden at once, before the removal job ran
        assert await timeline(api, reader) == [(author, "keep")]
    await settle(api)
    for reader in readers:
        assert [p.post_id for p in await store.inbox(reader)] == ["keep"]
    state = (await api.get(f"/v1/users/{author}/posts/gone")).json()
    assert state["state"] == "deleted"
    again = await api.put(f"/v1/users/{author}/posts/gone", json={"at": at(2)})
    assert again.status_code == 409 and again.json()["error"]["code"] == "post_deleted"
    unknown = await api.delete(f"/v1/users/{author}/posts/never")
    assert unknown.json() == {"deleted": False, "state": "absent"}


async def test_inactive_reader_is_rebuilt_on_read(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    reader, a, b, star = uid("reader"), uid("a"), uid("b"), uid("star")
    await follow(api, reader, a, b, star)
    for fan in [uid("fan") for _ in range(3)]:
        await follow(api, fan, star)
    await publish(api, a, "a1", 1)
    await publish(api, b, "b1", 2)
    await publish(api, star, "s1", 3)
    await settle(api)
    state = (await api.get(f"/v1/users/{a}/posts/a1")).json()
    assert (state["followers"], state["pushed"]) == (1, 0)  # walked, but nobody reads
    store = service_of(api).redis.inboxes
    assert await store.inbox(reader) == []
    assert await timeline(api, reader) == [(star, "s1"), (b, "b1"), (a, "a1")]
    assert len(await store.inbox(reader)) == 2  # rebuilt from the ordinary outboxes
    assert await store.is_active(reader)


async def test_threshold_crossings_lose_and_duplicate_nothing(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    author = uid("author")
    readers = [uid("reader") for _ in range(4)]
    for reader in readers[:2]:
        await timeline(api, reader)
        await follow(api, reader, author)
    await publish(api, author, "p1", 1)  # 2 followers: pushed
    await settle(api)

    # push -> pull: a third follower makes the author a celebrity at its next post
    await timeline(api, readers[2])
    await follow(api, readers[2], author)
    await settle(api)
    second = await publish(api, author, "p2", 2)
    assert second["mode"] == "pull"
    await settle(api)
    expected = [(author, "p2"), (author, "p1")]
    for reader in readers[:3]:
        assert await timeline(api, reader) == expected  # p1 from the inbox, p2 pulled

    # pull -> push: down to one follower (below 3 * 0.5), the next post drains the outbox
    for reader in readers[1:3]:
        assert (await api.delete(f"/v1/users/{reader}/following/{author}")).status_code == 200
    third = await publish(api, author, "p3", 3)
    assert third["mode"] == "push"
    assert await service_of(api).redis.outboxes.mode(author) == "draining"
    # while it drains, readers still pull: nothing is missing
    assert await timeline(api, readers[0]) == [(author, "p3"), *expected]
    await settle(api)
    store = service_of(api).redis.inboxes
    assert await service_of(api).redis.outboxes.mode(author) == "push"
    assert await service_of(api).redis.outboxes.pulled_among([author]) == []
    inbox = [p.post_id for p in await store.inbox(readers[0])]
    assert inbox == ["p3", "p2", "p1"]  # the pulled post was pushed by the drain
    assert await timeline(api, readers[0]) == [(author, "p3"), *expected]
    # a new follower gets the backfill, pushed posts only once
    await timeline(api, readers[3])
    await follow(api, readers[3], author)
    await settle(api)
    assert await timeline(api, readers[3]) == [(author, "p3"), *expected]


async def test_bad_inputs_are_422s_that_change_nothing(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    author = uid("author")
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    cases = [
        ("bad id!", {"at": at(1)}, "invalid_post"),
        ("p" * 65, {"at": at(1)}, "invalid_post"),
        ("p1", {"at": future}, "invalid_post"),
        ("p1", {"at": 1_700_000_000}, "invalid_request"),
        ("p1", {"at": "yesterday"}, "invalid_request"),
        ("p1", {}, "invalid_request"),
    ]
    for post, body, code in cases:
        response = await api.put(f"/v1/users/{author}/posts/{post}", json=body)
        assert response.status_code == 422, (post, body, response.text)
        assert response.json()["error"]["code"] == code
    missing = await api.get(f"/v1/users/{author}/posts/p1")
    assert missing.status_code == 404
    assert await service_of(api).redis.outboxes.newest(author, 10) == []

    await publish(api, author, "p1", 1)
    same = await api.put(f"/v1/users/{author}/posts/p1", json={"at": at(1)})
    assert same.status_code == 200 and same.json()["created"] is False
    moved = await api.put(f"/v1/users/{author}/posts/p1", json={"at": at(2)})
    assert moved.status_code == 409 and moved.json()["error"]["code"] == "post_conflict"
    assert [p.post_id for p in await service_of(api).redis.outboxes.newest(author, 10)] == ["p1"]

    reader = uid("reader")
    for params in ({"limit": 0}, {"limit": 10_000}, {"cursor": "not-a-cursor"}):
        response = await api.get(f"/v1/users/{reader}/timeline", params=params)
        assert response.status_code in (400, 422), response.text
    # a cursor of another reader's timeline is refused
    await follow(api, reader, author)
    await settle(api)
    page = (await api.get(f"/v1/users/{reader}/timeline", params={"limit": 1})).json()
    other = uid("other")
    if page["next_cursor"]:
        stolen = await api.get(
            f"/v1/users/{other}/timeline", params={"cursor": page["next_cursor"]}
        )
        assert stolen.status_code == 400


async def test_reconcile_repairs_a_drifted_inbox(
    api: httpx.AsyncClient, uid: Callable[[str], str], backends: Services
) -> None:
    from graphsvc.domain.timeline import Post
    from graphsvc.ops.timeline_check import check_timelines, repair_timelines

    reader, a, b, stranger = uid("reader"), uid("a"), uid("b"), uid("stranger")
    await timeline(api, reader)
    await follow(api, reader, a, b)
    for n in range(3):
        await publish(api, a, f"a{n}", n)
        await publish(api, b, f"b{n}", n + 0.5)
    await publish(api, stranger, "s0", 9)
    await settle(api)
    services = service_of(api)
    assert await check_timelines(services, [reader]) == []

    store = services.redis.inboxes
    await store._redis.zrem(store.key("in", reader), f"{a}|a1")  # a lost push
    await store.push([reader], [Post.of(stranger, "s0", 1)])  # a post it should not hold
    drifts = await check_timelines(services, [reader])
    assert {d.what for d in drifts} == {"missing from the inbox", "not for this inbox"}
    assert await repair_timelines(services, [reader]) == 1
    assert await check_timelines(services, [reader]) == []
    assert len(await store.inbox(reader)) == 6


async def test_reconcile_timelines_from_the_command_line(
    api: httpx.AsyncClient, uid: Callable[[str], str], server_settings: Settings
) -> None:
    reader, author = uid("reader"), uid("author")
    await timeline(api, reader)
    await follow(api, reader, author)
    await publish(api, author, "p0", 0)
    await settle(api)
    inboxes = service_of(api).redis.inboxes
    await inboxes._redis.delete(inboxes.key("in", reader))  # every push lost
    env = {**os.environ, "NEO4J_URI": server_settings.neo4j_uri,
           "REDIS_URL": server_settings.redis_url,
           "REDIS_CLUSTER": str(int(server_settings.redis_cluster))}  # fmt: skip
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "graphsvc.ops.cli", "reconcile", reader, "--timelines"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "timelines: checked 1 users: 1 drifts in 1 users, repaired; 0 left" in result.stdout
    assert [p.post_id for p in await inboxes.inbox(reader)] == ["p0"]


@pytest.mark.faults
async def test_a_worker_killed_in_the_middle_of_a_fanout_is_resumed_by_another(
    make_service: Callable[..., Services],
    uid: Callable[[str], str],
    server_settings: Settings,
    service_key: str,
) -> None:
    """The API only queues the fan-out; a worker runs it; killed mid-walk (SIGKILL: its lease
    just stops being renewed), a second worker takes the job over and finishes it."""
    service = make_service()
    author = uid("author")
    readers = [uid("reader") for _ in range(600)]
    for reader in readers:
        await service.relations.follow(reader, author)
    await service.redis.inboxes.mark_active(readers)
    env = {"FEED_FANOUT_BATCH": "1", "FEED_JOB_LEASE_SECONDS": "1", "WORKER_POLL_SECONDS": "0.1"}
    headers = {"Authorization": f"Bearer {service_key}"}
    process, url = start_api(server_settings, **env)
    try:
        async with httpx.AsyncClient(base_url=url, headers=headers) as http:
            response = await http.put(f"/v1/users/{author}/posts/p1", json={"at": at(1)})
            assert response.status_code == 202, response.text
            await asyncio.sleep(0.5)
            queued = await service.redis.outboxes.state(author, "p1")
            assert queued is not None and queued["followers"] == 0, "no worker runs yet"
            first = start_worker(server_env(server_settings, **env))
            try:
                for _ in range(6_000):  # kill it as soon as the fan-out has made some steps
                    state = await service.redis.outboxes.state(author, "p1")
                    if state and state["followers"] >= 20:
                        break
                    await asyncio.sleep(0.005)
            finally:
                first.kill()
                first.wait(timeout=30)
            halfway = await service.redis.outboxes.state(author, "p1")
            assert halfway is not None and 0 < halfway["followers"] < len(readers), halfway
            second = start_worker(server_env(server_settings, **env))
            try:
                for _ in range(300):
                    state = (await http.get(f"/v1/users/{author}/posts/p1")).json()
                    if state["state"] == "done":
                        break
                    await asyncio.sleep(0.2)
                assert state["state"] == "done", state
                assert state["followers"] >= len(readers)  # a step may be repeated after the kill
            finally:
                stop_process(second)
    finally:
        process.terminate()
        process.wait(timeout=30)
    member = f"{author}|p1"
    store = service.redis.inboxes
    missing = [r for r in readers if member not in {p.member for p in await store.inbox(r)}]
    assert missing == []


async def test_filtered_posts_never_end_a_timeline_early(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    reader, author = uid("reader"), uid("author")
    await timeline(api, reader)
    await follow(api, reader, author)
    for n in range(30):
        await publish(api, author, f"p{n}", n)
    await settle(api)
    assert (await api.delete(f"/v1/users/{author}/posts/p25")).status_code == 202
    # pages of 20 (21 asked of the inbox): the deleted post is among the first 21
    walked = await timeline(api, reader, limit=20)
    assert [p for _, p in walked] == [f"p{n}" for n in reversed(range(30)) if n != 25]


async def test_an_unfinished_rebuild_is_done_again_and_a_retried_publish_fans_out(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    from graphsvc.domain.timeline import Post

    reader, author = uid("reader"), uid("author")
    await follow(api, reader, author)
    await publish(api, author, "p0", 0)
    await settle(api)
    assert await timeline(api, reader) == [(author, "p0")]  # rebuilt at its first read
    inboxes = service_of(api).redis.inboxes
    # a rebuild that stopped half way: marked due, its inbox emptied
    await inboxes._redis.set(inboxes.key("rb", reader), "1")
    await inboxes._redis.delete(inboxes.key("in", reader))
    assert await timeline(api, reader) == [(author, "p0")]
    assert len(await inboxes.inbox(reader)) == 1

    # a publish whose fan-out was never queued (the process stopped after the outbox write)
    post = Post.of(author, "p1", int(BASE.timestamp() * 1e6) + 60_000_000)
    assert (await service_of(api).redis.outboxes.publish(post, "p1")).status == "published"
    again = await api.put(f"/v1/users/{author}/posts/p1", json={"at": at(1)})
    assert again.status_code == 200 and again.json()["created"] is False
    await settle(api)
    assert (await api.get(f"/v1/users/{author}/posts/p1")).json()["state"] == "done"
    assert [p.post_id for p in await inboxes.inbox(reader)] == ["p1", "p0"]


async def test_the_timeline_check_keeps_posts_of_a_suspended_followed_author(
    api: httpx.AsyncClient, uid: Callable[[str], str]
) -> None:
    from graphsvc.ops.timeline_check import check_timelines

    reader, author = uid("reader"), uid("author")
    await timeline(api, reader)
    await follow(api, reader, author)
    await publish(api, author, "p0", 0)
    await settle(api)
    response = await api.put(f"/v1/users/{author}/status", json={"status": "suspended"})
    assert response.status_code == 200, response.text
    await service_of(api).jobs.drain()
    assert await timeline(api, reader) == []  # hidden on read
    assert await check_timelines(service_of(api), [reader]) == []  # but not wrong
