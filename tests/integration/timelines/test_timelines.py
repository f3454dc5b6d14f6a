"""Home timelines against the real servers: push for ordinary authors, pull for celebrities,
merged on read; the timeline following the graph; switches at the threshold; a restart in the
middle of a fan-out; bad input.

Celebrities here have TIMELINE_CELEBRITY_FOLLOWERS = 3 followers (and are pushed again below 2,
TIMELINE_HYSTERESIS = 0.5), so a handful of users shows every case.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from graphsvc.bootstrap import Services
from graphsvc.client import AsyncGraphClient
from graphsvc.settings import Settings
from graphsvc.wire.schemas import PostDeletedBody
from tests.support import timelines
from tests.support.driver import Driver, assert_error, eventually, refused
from tests.support.helpers import server_env, start_api, start_worker, stop_process
from tests.support.times import BASE, at

api = timelines.timeline_driver  # the driver the tests below ask for


async def test_ordinary_and_celebrity_posts_merge_newest_first(
    api: Driver, uid: Callable[[str], str]
) -> None:
    reader, ordinary, star = uid("reader"), uid("ordinary"), uid("star")
    fans = [uid("fan") for _ in range(3)]
    assert await api.timeline_of(reader) == []  # the reader reads: it is active from now on
    await api.follows(reader, ordinary, star)
    for fan in fans:
        await api.follows(fan, star)

    pushed = await api.publish(ordinary, "o1", at(1))
    pulled = await api.publish(star, "s1", at(2))
    await api.publish(ordinary, "o2", at(3))
    assert (pushed.mode, pulled.mode) == ("push", "pull")
    assert pulled.state == "done"  # O(1): nothing to fan out
    await api.settle()

    state = await api.post(ordinary, "o1")
    assert (state.state, state.followers, state.pushed) == ("done", 1, 1)
    assert await api.timeline_of(reader) == [(ordinary, "o2"), (star, "s1"), (ordinary, "o1")]
    # the celebrity's post is in no home timeline: it is merged on read
    home = await api.services.core.redis.home_timelines.entries(reader)
    assert [p.member for p in home] == [f"{ordinary}|o2", f"{ordinary}|o1"]


async def test_pages_never_skip_or_repeat_while_posts_arrive(
    api: Driver, uid: Callable[[str], str]
) -> None:
    reader, ordinary, star = uid("reader"), uid("ordinary"), uid("star")
    await api.timeline_of(reader)
    await api.follows(reader, ordinary, star)
    for fan in [uid("fan") for _ in range(3)]:
        await api.follows(fan, star)
    for n in range(12):
        author = star if n % 3 == 0 else ordinary
        await api.publish(author, f"p{n}", at(n))
    await api.settle()

    seen: list[str] = []
    arrived = 0
    async for page in api.timeline(reader, page_size=5).pages():
        seen += [item.post_id for item in page.items]
        if page.next_cursor is None:
            break
        # new posts from both kinds of author arrive between pages
        await api.publish(ordinary, f"new{arrived}", at(100 + arrived))
        await api.publish(star, f"newstar{arrived}", at(100.5 + arrived))
        await api.settle()
        arrived += 1
    assert seen == [f"p{n}" for n in reversed(range(12))]
    assert arrived >= 2
    # the new posts are at the top of a fresh read
    top = await api.timeline_of(reader, page_size=2)
    assert top[:2] == [(star, f"newstar{arrived - 1}"), (ordinary, f"new{arrived - 1}")]


async def test_a_request_fans_out_nothing_until_its_approval_backfills(
    api: Driver, uid: Callable[[str], str]
) -> None:
    reader, author = uid("reader"), uid("author")
    await api.set_privacy(author, locked=True)
    for n in range(3):
        await api.publish(author, f"a{n}", at(n))
    await api.timeline_of(reader)
    assert (await api.follow(reader, author)).requested
    await api.publish(author, "a3", at(3))  # while the request waits
    await api.settle()
    assert await api.timeline_of(reader) == []  # a request is no follow
    await api.approve_follow_request(author, reader)
    await api.settle()
    assert [p for _, p in await api.timeline_of(reader)] == ["a3", "a2", "a1", "a0"]


async def test_follow_backfills_unfollow_and_block_remove(
    api: Driver, uid: Callable[[str], str]
) -> None:
    reader, author, other = uid("reader"), uid("author"), uid("other")
    for n in range(5):
        await api.publish(author, f"a{n}", at(n))
    await api.publish(other, "x0", at(10))
    await api.timeline_of(reader)
    await api.follows(reader, author, other)
    await api.settle()
    store = api.services.core.redis.home_timelines
    assert len(await store.entries(reader)) == 6  # backfilled by the follow events
    assert [p for _, p in await api.timeline_of(reader)] == ["x0", "a4", "a3", "a2", "a1", "a0"]

    # an unfollow hides the author at once, and its posts leave the home timeline once applied
    await api.unfollow(reader, author)
    assert await api.timeline_of(reader) == [(other, "x0")]
    await api.settle()
    assert [p.post_id for p in await store.entries(reader)] == ["x0"]

    # a block either way removes the blocked author's posts too
    await api.block(other, reader)
    assert await api.timeline_of(reader) == []
    await api.settle()
    assert await store.entries(reader) == []
    await api.publish(other, "x1", at(11))
    await api.settle()
    assert await api.timeline_of(reader) == []


async def test_delete_removes_from_every_timeline(api: Driver, uid: Callable[[str], str]) -> None:
    author, star = uid("author"), uid("star")
    readers = [uid("reader") for _ in range(2)]
    for reader in readers:
        await api.timeline_of(reader)
        await api.follows(reader, author, star)
    await api.follows(uid("fan"), star)  # the star's third follower: a celebrity
    await api.publish(author, "keep", at(1))
    await api.publish(author, "gone", at(2))
    await api.publish(star, "stargone", at(3))
    await api.settle()
    store = api.services.core.redis.home_timelines
    for reader in readers:
        assert len(await api.timeline_of(reader)) == 3

    for post_author, post in ((author, "gone"), (star, "stargone")):
        assert await api.delete_post(post_author, post) == PostDeletedBody(
            deleted=True, state="deleting"
        )
    for reader in readers:  # hidden at once, before the removal job ran
        assert await api.timeline_of(reader) == [(author, "keep")]
    await api.settle()
    for reader in readers:
        assert [p.post_id for p in await store.entries(reader)] == ["keep"]
    assert (await api.post(author, "gone")).state == "deleted"
    await refused(api.publish(author, "gone", at(2)), 409, "post_deleted")
    unknown = await api.delete_post(author, "never")
    assert unknown == PostDeletedBody(deleted=False, state="absent")


async def test_inactive_reader_is_rebuilt_on_read(api: Driver, uid: Callable[[str], str]) -> None:
    reader, a, b, star = uid("reader"), uid("a"), uid("b"), uid("star")
    await api.follows(reader, a, b, star)
    for fan in [uid("fan") for _ in range(3)]:
        await api.follows(fan, star)
    await api.publish(a, "a1", at(1))
    await api.publish(b, "b1", at(2))
    await api.publish(star, "s1", at(3))
    await api.settle()
    state = await api.post(a, "a1")
    assert (state.followers, state.pushed) == (1, 0)  # walked, but nobody reads
    store = api.services.core.redis.home_timelines
    assert await store.entries(reader) == []
    assert await api.timeline_of(reader) == [(star, "s1"), (b, "b1"), (a, "a1")]
    assert len(await store.entries(reader)) == 2  # rebuilt from the ordinary authors' posts
    assert await store.is_active(reader)


async def test_threshold_crossings_lose_and_duplicate_nothing(
    api: Driver, uid: Callable[[str], str]
) -> None:
    author = uid("author")
    readers = [uid("reader") for _ in range(4)]
    for reader in readers[:2]:
        await api.timeline_of(reader)
        await api.follows(reader, author)
    await api.publish(author, "p1", at(1))  # 2 followers: pushed
    await api.settle()

    # push -> pull: a third follower makes the author a celebrity at its next post
    await api.timeline_of(readers[2])
    await api.follows(readers[2], author)
    await api.settle()
    second = await api.publish(author, "p2", at(2))
    assert second.mode == "pull"
    await api.settle()
    expected = [(author, "p2"), (author, "p1")]
    for reader in readers[:3]:
        assert await api.timeline_of(reader) == expected  # p1 from the home timeline, p2 pulled

    # pull -> push: down to one follower (below 3 * 0.5), the next post drains the author's posts
    for reader in readers[1:3]:
        await api.unfollow(reader, author)
    third = await api.publish(author, "p3", at(3))
    assert third.mode == "push"
    assert await api.services.core.redis.author_posts.mode(author) == "draining"
    # while it drains, readers still pull: nothing is missing
    assert await api.timeline_of(readers[0]) == [(author, "p3"), *expected]
    await api.settle()
    store = api.services.core.redis.home_timelines
    assert await api.services.core.redis.author_posts.mode(author) == "push"
    assert await api.services.core.redis.home_timelines.pulled_among([author]) == []
    home = [p.post_id for p in await store.entries(readers[0])]
    assert home == ["p3", "p2", "p1"]  # the pulled post was pushed by the drain
    assert await api.timeline_of(readers[0]) == [(author, "p3"), *expected]
    # a new follower gets the backfill, pushed posts only once
    await api.timeline_of(readers[3])
    await api.follows(readers[3], author)
    await api.settle()
    assert await api.timeline_of(readers[3]) == [(author, "p3"), *expected]


async def test_bad_inputs_are_422s_that_change_nothing(
    api: Driver, uid: Callable[[str], str]
) -> None:
    author = uid("author")
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    cases = [
        ("bad id!", {"at": at(1).isoformat()}, "invalid_post"),
        ("p" * 65, {"at": at(1).isoformat()}, "invalid_post"),
        ("p1", {"at": future}, "invalid_post"),
        ("p1", {"at": 1_700_000_000}, "invalid_request"),
        ("p1", {"at": "yesterday"}, "invalid_request"),
        ("p1", {}, "invalid_request"),
    ]
    for post, body, code in cases:
        response = await api.http.put(f"/v1/users/{author}/posts/{post}", json=body)
        assert_error(response, 422, code)
    await refused(api.post(author, "p1"), 404, "post_not_found")
    assert await api.services.core.redis.author_posts.newest(author, 10) == []

    await api.publish(author, "p1", at(1))
    assert (await api.publish(author, "p1", at(1))).created is False
    await refused(api.publish(author, "p1", at(2)), 409, "post_conflict")
    assert [p.post_id for p in await api.services.core.redis.author_posts.newest(author, 10)] == [
        "p1"
    ]

    reader = uid("reader")
    for params in ({"limit": 0}, {"limit": 10_000}, {"cursor": "not-a-cursor"}):
        response = await api.http.get(f"/v1/users/{reader}/timeline", params=params)
        assert response.status_code in (400, 422), response.text
    # a cursor of another reader's timeline is refused
    await api.follows(reader, author)
    await api.settle()
    page = await anext(api.timeline(reader, page_size=1).pages())
    other = uid("other")
    if page.next_cursor:
        stolen = await api.http.get(
            f"/v1/users/{other}/timeline", params={"cursor": page.next_cursor}
        )
        assert stolen.status_code == 400


async def test_reconcile_repairs_a_drifted_home_timeline(
    api: Driver, uid: Callable[[str], str], backends: Services
) -> None:
    from graphsvc.domain.timeline import Post

    reader, a, b, stranger = uid("reader"), uid("a"), uid("b"), uid("stranger")
    await api.timeline_of(reader)
    await api.follows(reader, a, b)
    for n in range(3):
        await api.publish(a, f"a{n}", at(n))
        await api.publish(b, f"b{n}", at(n + 0.5))
    await api.publish(stranger, "s0", at(9))
    await api.settle()
    services = api.services
    assert await services.timeline_check.check([reader]) == []

    store = services.core.redis.home_timelines
    await store._redis.zrem(store.key("in", reader), f"{a}|a1")  # a lost push
    await store.push([reader], [Post.of(stranger, "s0", 1)])  # a post it should not hold
    drifts = await services.timeline_check.check([reader])
    assert {d.what for d in drifts} == {
        "missing from the home timeline",
        "not for this home timeline",
    }
    assert await services.timeline_check.repair([reader]) == 1
    assert await services.timeline_check.check([reader]) == []
    assert len(await store.entries(reader)) == 6


async def test_reconcile_timelines_from_the_command_line(
    api: Driver, uid: Callable[[str], str], server_settings: Settings
) -> None:
    reader, author = uid("reader"), uid("author")
    await api.timeline_of(reader)
    await api.follows(reader, author)
    await api.publish(author, "p0", at(0))
    await api.settle()
    home_timelines = api.services.core.redis.home_timelines
    await home_timelines._redis.delete(home_timelines.key("in", reader))  # every push lost
    env = {
        **os.environ,
        "NEO4J_URI": server_settings.neo4j.neo4j_uri,
        "REDIS_URL": server_settings.redis.redis_url,
        "REDIS_CLUSTER": str(int(server_settings.redis.redis_cluster)),
    }
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "graphsvc.ops.cli", "reconcile", reader, "--timelines"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "timelines: checked 1 users: 1 drifts in 1 users, repaired; 0 left" in result.stdout
    assert [p.post_id for p in await home_timelines.entries(reader)] == ["p0"]


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
    env = {
        "TIMELINE_FANOUT_BATCH": "1",
        "TIMELINE_JOB_LEASE_SECONDS": "1",
        "WORKER_POLL_SECONDS": "0.1",
    }
    process, url = start_api(server_settings, **env)
    try:
        async with AsyncGraphClient(url, api_key=service_key) as graph:
            for reader in readers:  # each reads its timeline: active readers, pushed into
                assert [item async for item in graph.timeline(reader)] == []
            assert (await graph.publish(author, "p1", at(1))).created
            await asyncio.sleep(0.5)
            queued = await service.core.redis.author_posts.state(author, "p1")
            assert queued is not None and queued["followers"] == 0, "no worker runs yet"
            first = start_worker(server_env(server_settings, **env))
            try:
                for _ in range(6_000):  # kill it as soon as the fan-out has made some steps
                    state = await service.core.redis.author_posts.state(author, "p1")
                    if state and state["followers"] >= 20:
                        break
                    await asyncio.sleep(0.005)
            finally:
                first.kill()
                first.wait(timeout=30)
            halfway = await service.core.redis.author_posts.state(author, "p1")
            assert halfway is not None and 0 < halfway["followers"] < len(readers), halfway
            second = start_worker(server_env(server_settings, **env))
            try:

                async def done() -> bool:
                    return (await graph.post(author, "p1")).state == "done"

                await eventually(done, seconds=60)
                post = await graph.post(author, "p1")
                assert post.followers >= len(readers)  # a step may be repeated after the kill
            finally:
                stop_process(second)
    finally:
        process.terminate()
        process.wait(timeout=30)
    member = f"{author}|p1"
    store = service.core.redis.home_timelines
    missing = [r for r in readers if member not in {p.member for p in await store.entries(r)}]
    assert missing == []


async def test_filtered_posts_never_end_a_timeline_early(
    api: Driver, uid: Callable[[str], str]
) -> None:
    reader, author = uid("reader"), uid("author")
    await api.timeline_of(reader)
    await api.follows(reader, author)
    for n in range(30):
        await api.publish(author, f"p{n}", at(n))
    await api.settle()
    assert (await api.delete_post(author, "p25")).deleted
    # pages of 20 (21 asked of the home timeline): the deleted post is among the first 21
    walked = await api.timeline_of(reader, page_size=20)
    assert [p for _, p in walked] == [f"p{n}" for n in reversed(range(30)) if n != 25]


async def test_an_unfinished_rebuild_is_done_again_and_a_retried_publish_fans_out(
    api: Driver, uid: Callable[[str], str]
) -> None:
    from graphsvc.domain.timeline import Post

    reader, author = uid("reader"), uid("author")
    await api.follows(reader, author)
    await api.publish(author, "p0", at(0))
    await api.settle()
    assert await api.timeline_of(reader) == [(author, "p0")]  # rebuilt at its first read
    home_timelines = api.services.core.redis.home_timelines
    # a rebuild that stopped half way: marked due, its home timeline emptied
    await home_timelines._redis.set(home_timelines.key("rb", reader), "1")
    await home_timelines._redis.delete(home_timelines.key("in", reader))
    assert await api.timeline_of(reader) == [(author, "p0")]
    assert len(await home_timelines.entries(reader)) == 1

    # a publish whose fan-out was never queued (the process stopped after the author's posts write)
    post = Post.of(author, "p1", int(BASE.timestamp() * 1e6) + 60_000_000)
    assert (await api.services.core.redis.author_posts.publish(post, "p1")).status == "published"
    assert (await api.publish(author, "p1", at(1))).created is False
    await api.settle()
    assert (await api.post(author, "p1")).state == "done"
    assert [p.post_id for p in await home_timelines.entries(reader)] == ["p1", "p0"]


async def test_the_timeline_check_keeps_posts_of_a_suspended_followed_author(
    api: Driver, uid: Callable[[str], str]
) -> None:

    reader, author = uid("reader"), uid("author")
    await api.timeline_of(reader)
    await api.follows(reader, author)
    await api.publish(author, "p0", at(0))
    await api.settle()
    await api.set_status(author, "suspended")
    await api.drain()
    assert await api.timeline_of(reader) == []  # hidden on read
    assert await api.services.timeline_check.check([reader]) == []  # but not wrong


async def test_an_erased_celebrity_is_no_longer_pulled_by_any_reader(
    api: Driver, uid: Callable[[str], str]
) -> None:
    """An erasure ends the author's pulls: its posts leave every timeline at once, and no
    reader's next read pulls it again."""
    star, other = uid("star"), uid("other")
    readers = [uid("reader") for _ in range(3)]  # three followers: the star is pulled
    for reader in readers:
        await api.timeline_of(reader)
        await api.follows(reader, star, other)
    await api.unfollow(readers[2], other)  # two followers: the other author is pushed
    assert (await api.publish(star, "s1", at(1))).mode == "pull"
    await api.publish(other, "o1", at(2))
    await api.settle()
    home_timelines = api.services.core.redis.home_timelines
    assert await home_timelines.pulled_among([star, other]) == [star]
    for reader in readers[:2]:
        assert await api.timeline_of(reader) == [(other, "o1"), (star, "s1")]
    assert await api.timeline_of(readers[2]) == [(star, "s1")]

    await api.erase(star)
    await api.drain()
    await api.settle()
    assert await home_timelines.pulled_among([star, other]) == []
    for reader in readers[:2]:
        assert await api.timeline_of(reader) == [(other, "o1")]
    assert await api.timeline_of(readers[2]) == []


async def test_an_erased_authors_posts_never_reach_the_next_user_with_its_id(
    api: Driver, uid: Callable[[str], str]
) -> None:
    """The reader follows x, x publishes, x is erased, a new user takes the id x and the reader
    follows it: x's post left the reader's home timeline before the id could be taken, and the post
    of another author the reader follows stays."""
    reader, author, other = uid("reader"), uid("author"), uid("other")
    await api.timeline_of(reader)
    await api.follows(reader, author, other)
    await api.publish(author, "px", at(1))
    await api.publish(other, "o1", at(2))
    await api.settle()
    assert await api.timeline_of(reader) == [(other, "o1"), (author, "px")]

    await api.erase(author)
    await api.drain()  # the erasure is done; the event stream is not applied yet
    assert not (await api.status(author)).exists
    home_timelines = api.services.core.redis.home_timelines
    assert [p.member for p in await home_timelines.entries(reader)] == [f"{other}|o1"]
    await api.follows(reader, author)  # the next user with the id
    await api.settle()
    assert await api.timeline_of(reader) == [(other, "o1")]
    await api.publish(author, "n1", at(3))
    await api.settle()
    assert await api.timeline_of(reader) == [(author, "n1"), (other, "o1")]


async def test_an_erased_celebritys_pushed_and_pulled_posts_never_come_back(
    api: Driver, uid: Callable[[str], str]
) -> None:
    """A celebrity's earlier posts are in home timelines, its later ones pulled from its posts: once
    erased, neither shows to a follower of the next user with the id, even while the event
    stream lags behind the erasure (and its erase event, applied late, leaves the new user's
    posts alone)."""
    star = uid("star")
    readers = [uid("reader") for _ in range(3)]
    for reader in readers[:2]:
        await api.timeline_of(reader)
        await api.follows(reader, star)
    assert (await api.publish(star, "p1", at(1))).mode == "push"
    await api.timeline_of(readers[2])
    await api.follows(readers[2], star)  # the third follower: a celebrity at its next post
    await api.settle()
    assert (await api.publish(star, "s1", at(2))).mode == "pull"
    await api.settle()
    for reader in readers:
        assert await api.timeline_of(reader) == [(star, "s1"), (star, "p1")]

    await api.erase(star)
    await api.drain()  # the erasure is done; its event is not applied yet
    assert not (await api.status(star)).exists
    await api.follows(readers[0], star)  # the next user with the id
    assert await api.timeline_of(readers[0]) == []
    await api.publish(star, "n1", at(3))
    await api.settle()  # the old erase event arrives now
    assert await api.timeline_of(readers[0]) == [(star, "n1")]
    assert [p.post_id for p in await api.services.core.redis.author_posts.newest(star, 10)] == [
        "n1"
    ]
    for reader in readers[1:]:
        assert await api.timeline_of(reader) == []
        assert await api.services.core.redis.home_timelines.entries(reader) == []
