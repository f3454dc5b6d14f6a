"""The worker: every background loop and job of graphsvc, in a process of its own
(``graphsvc worker``), so the serving processes spend their event loop on requests.

What it runs, each loop asking its store for work every WORKER_POLL_SECONDS or sooner:

- the outbox relay (committed graph events to the event stream, lost mirror writes repaired);
- the interaction flusher (buffered interactions into Neo4j's affinities);
- the timelines' event consumer (follows, unfollows, blocks and erasures applied to inboxes);
- timeline fan-outs, pushes, removals and drains, claimed from their queue in Redis;
- moderation jobs, status fan-outs and erasures, found by their marks in Neo4j.

Several workers may run at once and no job runs twice: the relay and the flusher take
their rounds under leases of their own, the consumer is one of a Redis consumer group,
timeline jobs are claimed atomically from their queue, and a moderation job is run only by
the worker holding its lease (``adapters/redis/leases.py``). A worker that dies stops renewing
what it holds; another takes it over once the lease runs out, from the job's durable record.
A worker runs at most WORKER_JOBS jobs at once and claims no more than it has room for, so a
burst of work waits in its queue, not in memory. A running moderation job's progress is
recorded beside its lease every WORKER_POLL_SECONDS, for ``GET .../status`` in any process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from graphsvc.adapters.redis.leases import Leases
from graphsvc.bootstrap import Services
from graphsvc.services.jobs import Progress
from graphsvc.services.loops import stop_if_asked, stopped

log = logging.getLogger(__name__)


class Worker:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._settings = services.settings
        self._leases: Leases = services.redis.leases

    async def run(self) -> None:
        """Run every loop until cancelled; cancelled, stop them (work resumes elsewhere)."""
        services = self._services
        loop = asyncio.get_running_loop()
        loops = [
            loop.create_task(services.relay.run(), name="relay"),
            loop.create_task(services.interactions.run_flusher(), name="interactions"),
            loop.create_task(services.timeline_events.run(), name="timeline-consumer"),
            loop.create_task(services.feed_jobs.run(), name="timeline-jobs"),
            loop.create_task(self._moderation_rounds(), name="moderation-jobs"),
        ]
        try:
            await asyncio.gather(*loops)
        finally:
            await stopped(loops)

    async def _moderation_rounds(self) -> None:
        while True:
            stop_if_asked()
            try:
                await self.take_moderation_jobs()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a store is down: the marks stay, the next round retries
                log.warning("cannot look for moderation jobs (%s); retrying", exc)
            await asyncio.sleep(self._settings.worker_poll_seconds)

    async def take_moderation_jobs(self) -> list[str]:
        """Start the marked moderation jobs this worker can lease and has room for; their
        keys."""
        jobs = self._services.jobs
        started: list[str] = []
        for user_id, erasing in await self._services.neo4j.moderation.pending_work():
            key = f"{'erase' if erasing else 'fanout'}:{user_id}"
            if jobs.holds(key):
                continue
            if not jobs.free():
                break
            token = await self._leases.take(key, self._settings.worker_lease_seconds)
            if token is None:  # another worker runs it
                continue
            work = self._services.moderation.job(user_id, erasing)
            jobs.start(key, self._leased(key, token, work), forget=True)
            started.append(key)
        return started

    def _leased(
        self, key: str, token: str, work: Callable[[Progress], Awaitable[None]]
    ) -> Callable[[Progress], Awaitable[None]]:
        """The job, renewing its lease while it runs; a job whose lease was lost (this worker
        stalled past it) stops, as another may run it. When it ends, the lease is kept for two
        more rounds rather than dropped, so a worker that listed the marks before the job
        finished cannot take the finished job again."""
        seconds = self._settings.worker_lease_seconds
        after = 2 * self._settings.worker_poll_seconds + 1

        async def run(progress: Progress) -> None:
            job = asyncio.current_task()
            assert job is not None

            async def renew() -> None:
                renewed = asyncio.get_running_loop().time()
                noted: dict[str, int] = {}
                while True:
                    await asyncio.sleep(self._settings.worker_poll_seconds)
                    if progress.notes != noted:  # for GET .../status in any process
                        noted = dict(progress.notes)
                        await self._leases.note(key, noted, seconds)
                    if asyncio.get_running_loop().time() - renewed < seconds / 3:
                        continue
                    if not await self._leases.renew(key, token, seconds):
                        log.warning("lost the lease of %s; leaving it to its new holder", key)
                        job.cancel()
                        return
                    renewed = asyncio.get_running_loop().time()

            renewing = asyncio.get_running_loop().create_task(renew())
            try:
                await work(progress)
            finally:
                renewing.cancel()
                await self._leases.note(key, {}, 0)
                await self._leases.renew(key, token, after)

        return run
