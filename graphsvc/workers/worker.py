"""The worker: every background loop and job of graphsvc, in a process of its own
(``graphsvc worker``), so the serving processes spend their event loop on requests.

What it runs, each loop asking its store for work every WORKER_POLL_SECONDS or sooner:

- the outbox relay (committed graph events to the event stream, lost mirror writes repaired);
- the interaction flusher (buffered interactions into Neo4j's affinities);
- the timelines' event consumer (follows, unfollows, blocks and erasures applied to inboxes);
- timeline fan-outs, pushes, removals and drains, claimed from their queue in Redis;
- moderation jobs, status propagations and erasures, found by their marks in Neo4j.

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
import contextlib
import logging
from collections.abc import Awaitable, Callable

from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.redis.leases import Leases
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.concurrency.loops import stop_if_asked, stopped
from graphsvc.settings import Settings
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.relay import Relay
from graphsvc.workers.timeline_events import TimelineEvents
from graphsvc.workers.timeline_jobs import TimelineJobs

log = logging.getLogger(__name__)

MODERATION = ("fanout:", "erase:")  # the keys of moderation jobs in the job registry


class Worker:
    def __init__(
        self,
        settings: Settings,
        *,
        relay: Relay,
        flusher: InteractionFlusher,
        consumer: TimelineEvents,
        timeline_jobs: TimelineJobs,
        moderation_jobs: ModerationJobs,
        marks: ModerationStore,
        jobs: Jobs,
        leases: Leases,
    ) -> None:
        self._settings = settings
        self._relay = relay
        self._flusher = flusher
        self._consumer = consumer
        self._timeline_jobs = timeline_jobs
        self._moderation_jobs = moderation_jobs
        self._marks = marks
        self._jobs = jobs
        self._leases = leases

    async def run(self) -> None:
        """Run every loop until cancelled; cancelled, stop them (work resumes elsewhere)."""
        loop = asyncio.get_running_loop()
        loops = [
            loop.create_task(self._relay.run(), name="relay"),
            loop.create_task(self._flusher.run(), name="interactions"),
            loop.create_task(self._consumer.run(), name="timeline-consumer"),
            loop.create_task(self._timeline_jobs.run(), name="timeline-jobs"),
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
        keys. Moderation jobs take at most half the slots (at least one), so long erasures
        never starve the timeline jobs, which publishes wait on."""
        jobs = self._jobs
        room = max(1, self._settings.worker_jobs // 2) - jobs.running(MODERATION)
        started: list[str] = []
        for user_id, erasing in await self._marks.pending_work():
            key = f"{'erase' if erasing else 'fanout'}:{user_id}"
            if jobs.holds(key):
                continue
            if len(started) >= min(room, jobs.free()):
                break
            token = await self._leases.take(key, self._settings.worker_lease_seconds)
            if token is None:  # another worker runs it
                continue
            work = self._moderation_jobs.job(user_id, erasing)
            jobs.start(key, self._leased(key, token, work), forget=True)
            started.append(key)
        return started

    def _leased(
        self, key: str, token: str, work: Callable[[Progress], Awaitable[None]]
    ) -> Callable[[Progress], Awaitable[None]]:
        """The job under its lease. Every attempt (the registry retries a failed one) starts
        by renewing the lease, and ends at once if it was lost; while it runs, the lease is
        renewed and its progress recorded every round; if the lease cannot be confirmed
        before it runs out (it was taken over, or Redis cannot be reached), the job is
        cancelled, as another worker may run it. After a success the lease is kept for two
        more rounds rather than dropped, so a worker that listed the marks before the job
        finished cannot start the finished job again (the same when the job is stopped); after
        a failure it is kept whole, for this worker's retry."""
        seconds = self._settings.worker_lease_seconds
        rounds = self._settings.worker_poll_seconds
        after = 2 * rounds + 1

        async def run(progress: Progress) -> None:
            if not await self._leases.renew(key, token, seconds):
                log.warning("the lease of %s was taken over; leaving the job to its holder", key)
                return
            job = asyncio.current_task()
            assert job is not None
            clock = asyncio.get_running_loop().time

            async def renew() -> None:
                renewed = clock()
                while clock() - renewed < seconds:
                    await asyncio.sleep(rounds)
                    try:
                        await self._leases.note(key, dict(progress.notes), seconds)
                        if clock() - renewed < seconds / 3:
                            continue
                        if not await self._leases.renew(key, token, seconds):
                            break
                        renewed = clock()
                    except Exception as exc:  # Redis down: the lease runs out unless it answers
                        log.warning("cannot renew the lease of %s (%s)", key, exc)
                log.warning("lost the lease of %s; stopping the job for its new holder", key)
                job.cancel()

            renewing = asyncio.get_running_loop().create_task(renew())
            keep = seconds  # a failure keeps the lease for this worker's retry
            try:
                await work(progress)
                keep = after
            except asyncio.CancelledError:  # stopped, or the lease lost: soon someone else's
                keep = after
                raise
            finally:
                renewing.cancel()
                with contextlib.suppress(Exception):  # the lease lapses by itself
                    if await self._leases.renew(key, token, keep):
                        await self._leases.note(key, {}, 0)

        return run
