"""The worker against the real servers: a serving process only records background work, and
workers run it, each job once however many workers run, within the queue's bound.

(A worker killed in the middle of a timeline fan-out, resumed by another worker process, is in
``test_timelines.py``.)
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from helpers import app_client

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, Services, build
from graphsvc.concurrency import jobs as runner
from graphsvc.settings import Settings

UserIds = Callable[[str], str]
AT = (datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=1)).isoformat()


def settings_of(server_settings: Settings, **overrides: object) -> Settings:
    return server_settings.with_values(
        **{"rate_limits_enabled": False, "worker_poll_seconds": 0.1, **overrides}
    )


@asynccontextmanager
async def serving(
    settings: Settings, connections: Connections, key: str
) -> AsyncIterator[tuple[httpx.AsyncClient, Services]]:
    """An app over services built as `graphsvc serve` builds them (background work left to
    workers)."""
    services = build(settings, connections, serve=True)
    app = create_app(settings, services)
    async with app_client(app, key) as http:
        yield http, services


@asynccontextmanager
async def worker(settings: Settings, connections: Connections) -> AsyncIterator[Services]:
    """A worker's services and loops, as `graphsvc worker` runs them."""
    services = build(settings, connections)
    await services.timeline_events.prepare()
    task = asyncio.get_running_loop().create_task(services.worker.run())
    try:
        yield services
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await services.close()


async def wait_for(check: Callable[[], object], seconds: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():  # type: ignore[misc]
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_the_api_serves_with_no_worker_and_its_background_work_waits_for_one(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, feed_celebrity_followers=1_000)
    author, reader, other = uid("author"), uid("reader"), uid("other")
    async with serving(settings, connections, service_key) as (http, services):
        for src, dst in ((reader, author), (other, author), (author, other)):
            assert (await http.put(f"/v1/users/{src}/following/{dst}")).status_code == 200
        assert (await http.get(f"/v1/users/{author}/counts")).json()["followers"] == 2
        followers = (await http.get(f"/v1/users/{author}/followers")).json()["items"]
        assert [item["user_id"] for item in followers] == [other, reader]
        await services.redis.inboxes.mark_active([reader, other])
        published = await http.put(f"/v1/users/{author}/posts/p1", json={"at": AT})
        assert published.status_code == 202, published.text
        status = await http.put(f"/v1/users/{other}/status", json={"status": "suspended"})
        assert status.status_code == 200 and status.json()["fanout_pending"] is True
        await asyncio.sleep(0.5)  # nothing runs the work meanwhile
        post = (await http.get(f"/v1/users/{author}/posts/p1")).json()
        assert (post["state"], post["followers"]) == ("fanning_out", 0)
        pending = await services.neo4j.moderation.pending_work()
        assert (other, False) in pending
        async with worker(settings, connections):

            async def post_done() -> bool:
                body = (await http.get(f"/v1/users/{author}/posts/p1")).json()
                return body["state"] == "done"

            async def fanout_done() -> bool:
                body = (await http.get(f"/v1/users/{other}/status")).json()
                return body["fanout_pending"] is False

            await wait_for(post_done)
            await wait_for(fanout_done)
        inbox = await services.redis.inboxes.inbox(reader)
        assert [p.post_id for p in inbox] == ["p1"]
        counts = (await http.get(f"/v1/users/{author}/counts")).json()
        assert (counts["followers"], counts["followers_active"]) == (2, 1)


async def test_two_workers_run_each_job_once(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings)
    users = [uid("suspended") for _ in range(6)]
    hub = uid("hub")
    async with serving(settings, connections, service_key) as (http, services):
        for user in users:
            assert (await http.put(f"/v1/users/{user}/following/{hub}")).status_code == 200
            await http.put(f"/v1/users/{hub}/following/{user}")
        for user in users:
            body = {"status": "spam"}
            assert (await http.put(f"/v1/users/{user}/status", json=body)).status_code == 200
        for n in range(6):
            response = await http.put(f"/v1/users/{hub}/posts/q{n}", json={"at": AT})
            assert response.status_code == 202
        one, two = build(settings, connections), build(settings, connections)
        taken = await asyncio.gather(one.worker.claim(), two.worker.claim())
        mine = {f"fanout:{user}" for user in users}
        started = [key for keys in taken for key in keys if key in mine]
        assert sorted(started) == sorted(mine), "each job started by exactly one worker"
        pushes = {f"push|{hub}|q{n}" for n in range(6)}
        claimed = [key for keys in taken for key in keys if key in pushes]
        assert sorted(claimed) == sorted(pushes), "each timeline job claimed by exactly one"
        await asyncio.gather(one.jobs.drain(), two.jobs.drain())
        for n in range(6):
            assert (await http.get(f"/v1/users/{hub}/posts/q{n}")).json()["state"] == "done"
        again = await one.worker.claim()
        assert not mine & set(again), "a finished job is not taken again"
        assert not {u for u, _ in await services.neo4j.moderation.pending_work()} & set(users)
        counts = (await http.get(f"/v1/users/{hub}/counts")).json()
        assert (counts["followers"], counts["followers_active"]) == (6, 0)


async def test_a_dead_workers_moderation_job_is_taken_over_once_its_lease_runs_out(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, worker_lease_seconds=1.0)
    user, fan = uid("user"), uid("fan")
    async with serving(settings, connections, service_key) as (http, services):
        await http.put(f"/v1/users/{fan}/following/{user}")
        await http.put(f"/v1/users/{user}/status", json={"status": "suspended"})
        # a worker took the job and died: its lease is held, and never renewed
        assert await services.redis.leases.take(f"fanout:{user}", 1.0) is not None
        survivor = build(settings, connections)
        assert f"fanout:{user}" not in await survivor.worker.take_moderation_jobs()
        await asyncio.sleep(1.2)
        assert f"fanout:{user}" in await survivor.worker.take_moderation_jobs()
        await survivor.jobs.drain()
        assert (await http.get(f"/v1/users/{user}/status")).json()["fanout_pending"] is False


async def test_a_full_queue_refuses_new_work_and_loses_nothing(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    # a queue of its own (another key prefix): the shared one may hold other tests' jobs
    own = uuid.uuid4().hex[:10]
    settings = settings_of(server_settings, worker_queue_max=2, redis_prefix=f"wq{own}:")
    author, reader = f"wq{own}.author", f"wq{own}.reader"
    async with serving(settings, connections, service_key) as (http, services):
        await http.put(f"/v1/users/{reader}/following/{author}")
        await services.redis.inboxes.mark_active([reader])
        for post in ("a", "b"):
            response = await http.put(f"/v1/users/{author}/posts/{post}", json={"at": AT})
            assert response.status_code == 202, response.text
        refused = await http.put(f"/v1/users/{author}/posts/c", json={"at": AT})
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "queue_full"
        assert "WORKER_QUEUE_MAX" in refused.json()["error"]["message"]
        assert refused.headers["retry-after"]
        assert (await http.get(f"/v1/users/{author}/posts/c")).status_code == 404
        async with worker(settings, connections):

            async def drained() -> bool:
                return await services.redis.timeline_job_queue.depth() == 0

            await wait_for(drained)
        again = await http.put(f"/v1/users/{author}/posts/c", json={"at": AT})
        assert again.status_code == 202, again.text
        async with worker(settings, connections):
            await wait_for(drained)
        inbox = await services.redis.inboxes.inbox(reader)
        assert sorted(p.post_id for p in inbox) == ["a", "b", "c"]


async def test_the_api_reports_the_progress_of_a_job_a_worker_runs(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    settings = settings_of(server_settings, fanout_batch_edges=3)
    doomed, fans = uid("doomed"), [uid("fan") for _ in range(300)]
    async with serving(settings, connections, service_key) as (http, services):
        for fan in fans:
            await services.relations.follow(fan, doomed)
        assert (await http.delete(f"/v1/users/{doomed}")).status_code == 202
        seen: list[dict] = []
        async with worker(settings, connections):

            async def erased() -> bool:
                body = (await http.get(f"/v1/users/{doomed}/status")).json()
                if body["progress"]:
                    seen.append(body["progress"])
                return body["exists"] is False

            await wait_for(erased, seconds=60)
        assert seen, "the serving process saw the worker's progress"
        assert 0 < seen[0].get("followers", 0) <= len(fans)
        assert (await http.get(f"/v1/users/{doomed}/status")).json()["progress"] is None


async def test_a_queued_timeline_job_wakes_a_waiting_worker(
    server_settings: Settings, connections: Connections, service_key: str, uid: UserIds
) -> None:
    """The worker polls rarely here (its wait is at most REDIS_SOCKET_TIMEOUT / 2, 5 s); the
    publish's wake-up has it claim the fan-out at once."""
    settings = settings_of(server_settings, worker_poll_seconds=30.0)
    author, reader = uid("author"), uid("reader")
    async with serving(settings, connections, service_key) as (http, services):
        await http.put(f"/v1/users/{reader}/following/{author}")
        await services.redis.inboxes.mark_active([reader])
        async with worker(settings, connections):
            await asyncio.sleep(0.5)  # the worker has looked once and now waits
            response = await http.put(f"/v1/users/{author}/posts/w1", json={"at": AT})
            assert response.status_code == 202, response.text

            async def done() -> bool:
                body = (await http.get(f"/v1/users/{author}/posts/w1")).json()
                return body["state"] == "done"

            await wait_for(done, seconds=2.0)
        assert [p.post_id for p in await services.redis.inboxes.inbox(reader)] == ["w1"]


async def test_a_job_that_gave_up_is_claimed_again_once_its_lease_runs_out(
    server_settings: Settings,
    connections: Connections,
    uid: UserIds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job that keeps failing (a store down for minutes) is not retried for ever in its
    process: its lease is left to run out, and the next claim, anywhere, runs it again."""
    monkeypatch.setattr(runner, "RETRIES", 0)
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

    jobs = build(settings_of(server_settings), connections).jobs
    assert await jobs.claim([Flaky()]) == [key]
    await jobs.drain()
    assert await jobs.claim([Flaky()]) == [], "its lease is held until it runs out"
    await asyncio.sleep(0.6)
    assert await jobs.claim([Flaky()]) == [key]
    await jobs.drain()
    assert calls == [key, key]
