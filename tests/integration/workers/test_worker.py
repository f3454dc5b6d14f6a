"""The worker against the real servers: a serving process only records background work, and
workers run it, each job once however many workers run, within the queue's bound; a loop that
ends while its worker runs is started again.

(A worker killed in the middle of a timeline fan-out, resumed by another worker process, is in
``test_timelines.py``.)
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, Services, build, build_serving
from graphsvc.concurrency import jobs as runner
from graphsvc.concurrency import retries
from graphsvc.settings import Settings
from tests.support.driver import Driver, eventually, refused
from tests.support.helpers import app_client

UserIds = Callable[[str], str]
AT = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=1)


def settings_of(server_settings: Settings, **overrides: object) -> Settings:
    return server_settings.with_values(
        **{"rate_limits_enabled": False, "worker_poll_seconds": 0.1, **overrides}
    )


@asynccontextmanager
async def serving(settings: Settings, connections: Connections, key: str) -> AsyncIterator[Driver]:
    """An app over services built as `graphsvc serve` builds them (background work left to
    workers)."""
    services = build_serving(settings, connections)
    async with Driver(app_client(create_app(settings, services), key)) as graph:
        yield graph


@asynccontextmanager
async def worker(settings: Settings, connections: Connections) -> AsyncIterator[Services]:
    """A worker's services and loops, as `graphsvc worker` runs them."""
    services = build(settings, connections)
    await services.background.timeline_events.prepare()
    task = asyncio.get_running_loop().create_task(services.background.worker.run(), name="worker")
    try:
        yield services
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await services.close()


async def test_the_api_serves_with_no_worker_and_its_background_work_waits_for_one(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, timeline_celebrity_followers=1_000)
    author, reader, other = uid("author"), uid("reader"), uid("other")
    async with serving(settings, connections, service_key) as graph:
        await graph.follow_pairs((reader, author), (other, author), (author, other))
        assert (await graph.counts(author)).followers == 2
        assert await graph.ids(author, "followers") == [other, reader]
        for user in (reader, other):  # readers of their timelines, pushed into
            assert await graph.timeline_of(user) == []
        published = await graph.publish(author, "p1", AT)
        assert published.created
        status = await graph.set_status(other, "suspended")
        assert status.fanout_pending is True
        await asyncio.sleep(0.5)  # nothing runs the work meanwhile
        post = await graph.post(author, "p1")
        assert (post.state, post.followers) == ("fanning_out", 0)
        pending = await graph.services.core.neo4j.moderation.pending_work()
        assert (other, False) in pending
        async with worker(settings, connections):

            async def post_done() -> bool:
                return (await graph.post(author, "p1")).state == "done"

            async def propagation_done() -> bool:
                return (await graph.status(other)).fanout_pending is False

            await eventually(post_done)
            await eventually(propagation_done)
        home = await graph.services.core.redis.home_timelines.entries(reader)
        assert [p.post_id for p in home] == ["p1"]
        counts = await graph.counts(author)
        assert (counts.followers, counts.followers_active) == (2, 1)


async def test_two_workers_run_each_job_once(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings)
    users = [uid("suspended") for _ in range(6)]
    hub = uid("hub")
    async with serving(settings, connections, service_key) as graph:
        for user in users:
            await graph.follow_pairs((user, hub), (hub, user))
        for user in users:
            await graph.set_status(user, "spam")
        for n in range(6):
            assert (await graph.publish(hub, f"q{n}", AT)).created
        one, two = build(settings, connections), build(settings, connections)
        mine = {f"fanout:{user}" for user in users}
        pushes = {f"push|{hub}|q{n}" for n in range(6)}
        # Both claim at once, round after round: two workers that read the same due jobs
        # split them by their leases, and a worker whose slots are full takes the rest once
        # its running jobs end, so the rounds go on until every job was taken (or a deadline).
        taken: list[str] = []
        deadline = asyncio.get_running_loop().time() + 60
        while not set(taken) >= mine | pushes and asyncio.get_running_loop().time() < deadline:
            rounds = await asyncio.gather(
                one.background.worker.claim(), two.background.worker.claim()
            )
            taken += [key for keys in rounds for key in keys]
            await asyncio.sleep(0.05)
        started = [key for key in taken if key in mine]
        assert sorted(started) == sorted(mine), "each job started by exactly one worker"
        claimed = [key for key in taken if key in pushes]
        assert sorted(claimed) == sorted(pushes), "each timeline job claimed by exactly one"
        await asyncio.gather(one.core.jobs.drain(), two.core.jobs.drain())
        for n in range(6):
            assert (await graph.post(hub, f"q{n}")).state == "done"
        again = await one.background.worker.claim()
        assert not mine & set(again), "a finished job is not taken again"
        pending = await graph.services.core.neo4j.moderation.pending_work()
        assert not {u for u, _ in pending} & set(users)
        counts = await graph.counts(hub)
        assert (counts.followers, counts.followers_active) == (6, 0)


async def test_a_dead_workers_moderation_job_is_taken_over_once_its_lease_runs_out(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, worker_lease_seconds=1.0)
    user, fan = uid("user"), uid("fan")
    async with serving(settings, connections, service_key) as graph:
        await graph.follows(fan, user)
        await graph.set_status(user, "suspended")
        # a worker took the job and died: its lease is held, and never renewed
        assert await graph.services.core.redis.leases.take(f"fanout:{user}", 1.0) is not None
        survivor = build(settings, connections)
        assert f"fanout:{user}" not in await survivor.background.worker.take_moderation_jobs()
        await asyncio.sleep(1.2)
        assert f"fanout:{user}" in await survivor.background.worker.take_moderation_jobs()
        await survivor.core.jobs.drain()
        assert (await graph.status(user)).fanout_pending is False


async def test_a_full_queue_refuses_new_work_and_loses_nothing(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    # a queue of its own (another key prefix): the shared one may hold other tests' jobs
    own = uuid.uuid4().hex[:10]
    settings = settings_of(server_settings, worker_queue_max=2, redis_prefix=f"wq{own}:")
    author, reader = f"wq{own}.author", f"wq{own}.reader"
    async with serving(settings, connections, service_key) as graph:
        await graph.follows(reader, author)
        assert await graph.timeline_of(reader) == []  # a reader: pushed into
        for post in ("a", "b"):
            assert (await graph.publish(author, post, AT)).created
        error = await refused(graph.publish(author, "c", AT), 503, "queue_full")
        assert "WORKER_QUEUE_MAX" in error.message
        assert error.retry_after
        await refused(graph.post(author, "c"), 404, "post_not_found")
        queue = graph.services.core.redis.timeline_job_queue
        async with worker(settings, connections):

            async def drained() -> bool:
                return await queue.depth() == 0

            await eventually(drained)
        assert (await graph.publish(author, "c", AT)).created
        async with worker(settings, connections):
            await eventually(drained)
        home = await graph.services.core.redis.home_timelines.entries(reader)
        assert sorted(p.post_id for p in home) == ["a", "b", "c"]


async def test_the_api_reports_the_progress_of_a_job_a_worker_runs(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, fanout_batch_edges=3)
    doomed, fans = uid("doomed"), [uid("fan") for _ in range(300)]
    async with serving(settings, connections, service_key) as graph:
        for fan in fans:
            await graph.services.relations.follow(fan, doomed)
        assert (await graph.erase(doomed)).state == "erasing"
        seen: list[dict[str, int]] = []
        async with worker(settings, connections):

            async def erased() -> bool:
                status = await graph.status(doomed)
                if status.progress:
                    seen.append(status.progress)
                return status.exists is False

            await eventually(erased, seconds=60)
        assert seen, "the serving process saw the worker's progress"
        assert 0 < seen[0].get("followers", 0) <= len(fans)
        assert (await graph.status(doomed)).progress is None


async def test_a_queued_timeline_job_wakes_a_waiting_worker(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    """The worker polls rarely here (its wait is at most REDIS_SOCKET_TIMEOUT / 2, 5 s); the
    publish's wake-up has it claim the fan-out at once."""
    settings = settings_of(server_settings, worker_poll_seconds=30.0)
    author, reader = uid("author"), uid("reader")
    async with serving(settings, connections, service_key) as graph:
        await graph.follows(reader, author)
        assert await graph.timeline_of(reader) == []  # a reader: pushed into
        async with worker(settings, connections):
            await asyncio.sleep(0.5)  # the worker has looked once and now waits
            assert (await graph.publish(author, "w1", AT)).created

            async def done() -> bool:
                return (await graph.post(author, "w1")).state == "done"

            await eventually(done, seconds=2.0)
        home = await graph.services.core.redis.home_timelines.entries(reader)
        assert [p.post_id for p in home] == ["w1"]


async def test_a_job_that_gave_up_is_claimed_again_once_its_lease_runs_out(
    server_settings: Settings,
    connections: Connections,
    uid: UserIds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job that keeps failing (a store down for minutes) is not retried for ever in its
    process: its lease is left to run out, and the next claim, anywhere, runs it again."""
    monkeypatch.setattr(retries, "JOB_RETRIES", 0)
    key, calls = uid("flaky"), []

    class Flaky:
        name, lease_seconds, most = "flaky", 0.5, 1

        async def due(self, limit: int) -> list[str]:
            return [key] if len(calls) < 2 else []

        async def run(self, job: str, progress: runner.Progress) -> None:
            calls.append(job)
            if len(calls) == 1:
                raise ConnectionError("a store is down")
            progress.add("done", 1)

    jobs = build(settings_of(server_settings), connections).core.jobs
    assert await jobs.claim([Flaky()]) == [key]
    await jobs.drain()
    assert await jobs.claim([Flaky()]) == [], "its lease is held until it runs out"
    await asyncio.sleep(0.6)
    assert await jobs.claim([Flaky()]) == [key]
    await jobs.drain()
    assert calls == [key, key]


async def test_a_loop_that_ends_while_its_worker_runs_is_started_again(
    server_settings: Settings,
    connections: Connections,
    service_key: str,
    uid: UserIds,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As when a library cancels the task it runs in, not its worker's: the worker goes on,
    says so, and its job claims run again (a suspension's propagation gets done)."""
    settings = settings_of(server_settings)
    user, fan = uid("user"), uid("fan")
    caplog.set_level(logging.ERROR, logger="graphsvc.concurrency.loops")
    async with serving(settings, connections, service_key) as graph, worker(settings, connections):
        await graph.follows(fan, user)
        (claims,) = named("jobs")
        claims.cancel()
        await asyncio.gather(claims, return_exceptions=True)

        async def started_again() -> bool:
            return any(task is not claims and not task.done() for task in named("jobs"))

        await eventually(started_again)
        assert not any(task.done() for task in named("worker"))
        await graph.set_status(user, "suspended")

        async def propagated() -> bool:
            return (await graph.status(user)).fanout_pending is False

        await eventually(propagated)
    ended = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loop jobs ")]
    assert ended and ended[0].startswith("loop jobs ended (it was cancelled")


def named(name: str) -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks() if task.get_name() == name]
