"""Timeline fan-outs in the background, durable across restarts.

Three kinds of job, each named by what it works on:

- ``push|author|post``: push a new post of an ordinary author into every active follower's
  inbox, FEED_FANOUT_BATCH followers a step (the follower list comes from the mirror, and
  from Neo4j past its hot list), each step one pipelined round trip of push scripts.
- ``remove|author|post``: take a deleted post out of every follower's inbox.
- ``drain|author``: an author fallen back below the celebrity threshold: push its outbox into
  every active follower's inbox, then stop readers pulling it (``domain/timeline.py``).

A job is queued in Redis (``{feed}:jobs``) before it starts, and its position in the walk of
followers is saved after every step. A serving process only queues it, due at once, and wakes
a waiting worker (``graphsvc worker``), which claims due jobs then and at least every
WORKER_POLL_SECONDS, each with a lease it renews at every step; a job whose lease runs out
(its worker stopped) is claimed again by whichever worker looks next, and resumes at its
saved position. A process that runs its own background work (the CLI, tests) leases the job
to itself at once and runs it. The queue holds at most WORKER_QUEUE_MAX jobs: past it, a
publish or delete is refused (503) before it changes anything. Every step is idempotent, so a
step run twice changes nothing. Followers who follow during a push are reached by the follow
event's backfill instead (``timeline_events.py``); a post deleted during its push stops it.
"""

from __future__ import annotations

import asyncio
import logging

from graphsvc.adapters.redis.timelines import Inboxes, Outboxes, TimelineJobQueue
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import QueueFull
from graphsvc.domain.model import Entry, Side
from graphsvc.domain.timeline import Post
from graphsvc.services.lists import Lists
from graphsvc.settings import Settings

log = logging.getLogger(__name__)


class TimelineJobs:
    def __init__(
        self,
        outboxes: Outboxes,
        inboxes: Inboxes,
        queue: TimelineJobQueue,
        lists: Lists,
        jobs: Jobs,
        settings: Settings,
        *,
        here: bool = True,
    ) -> None:
        self._outboxes = outboxes
        self._inboxes = inboxes
        self._queue = queue
        self._lists = lists
        self._jobs = jobs
        self._settings = settings
        self._here = here
        # a blocking wait shorter than the connection's read timeout
        self._poll = min(settings.worker_poll_seconds, settings.redis_socket_timeout / 2)

    async def ensure_room(self) -> None:
        """Refuse new work while the queue is full (the caller has changed nothing yet)."""
        if await self._queue.depth() >= self._settings.worker_queue_max:
            raise QueueFull(
                f"the timeline job queue holds WORKER_QUEUE_MAX "
                f"({self._settings.worker_queue_max}) jobs; retry once workers catch up",
                headers={"Retry-After": "5"},
            )

    async def start(self, job: str) -> None:
        """Queue the job; a process with its own background work runs it here. A job already
        queued is left to its holder."""
        if await self._queue.enqueue(job, leased=self._here) and self._here:
            self._run(job)

    def _run(self, job: str) -> None:
        kind, _, rest = job.partition("|")
        author, _, post_id = rest.partition("|")

        async def work(progress: Progress) -> None:
            match kind:
                case "push":
                    await self._push(job, author, post_id, progress)
                case "remove":
                    await self._remove(job, author, post_id, progress)
                case "drain":
                    await self._drain(job, author, progress)
                case _:
                    log.error("unknown timeline job %r dropped", job)
            await self._queue.finish(job)

        self._jobs.start(f"timeline:{job}", work, forget=True)

    async def resume_due(self) -> int:
        """Run here the jobs that are due: queued by a serving process, or left by a worker
        that stopped (their lease ran out); no more than this process has free slots for."""
        free = self._jobs.free()
        if not free:
            return 0
        claimed = await self._queue.claim_due(min(100, free))
        for job in claimed:
            log.info("resuming timeline job %s", job)
            self._run(job)
        return len(claimed)

    async def run(self) -> None:
        """Claim due jobs as soon as a serving process queues one (a wake-up list in Redis),
        and at least every WORKER_POLL_SECONDS (orphaned jobs), until cancelled."""
        while True:
            stop_if_asked()
            try:
                await self.resume_due()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis down: the queue keeps the jobs
                log.warning("timeline job queue unavailable (%s); retrying", exc)
                await asyncio.sleep(self._settings.worker_poll_seconds)
                continue
            try:  # woken as soon as a serving process queues a job
                await self._queue.wait(self._poll)
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(self._settings.worker_poll_seconds)

    async def _followers(self, job: str, author: str, progress: Progress):
        """The author's followers in steps, from the job's saved position; each step's
        position is saved (and the lease renewed) once the caller's work on it is done."""
        saved = await self._queue.position(job)
        position = _decode(saved) if saved else None
        size = self._settings.feed_fanout_batch
        while True:
            followers: list[Entry] = await self._lists.walk(Side.FOLLOWERS, author, position, size)
            yield [f.user_id for f in followers], len(followers) < size
            progress.add("followers", len(followers))
            if len(followers) < size:
                return
            position = followers[-1].position
            await self._queue.advance(job, f"{position.since}|{position.user_id}")

    async def _push(self, job: str, author: str, post_id: str, progress: Progress) -> None:
        state = await self._outboxes.state(author, post_id)
        if state is None or state["state"] != "fanning_out":
            return  # deleted, or done by a run that stopped before forgetting the job
        post = Post.of(author, post_id, int(state["at"]))
        async for readers, last in self._followers(job, author, progress):
            reached, _ = await self._inboxes.push(readers, [post])
            step = "done" if last else "fanning_out"
            if not await self._outboxes.progress(author, post_id, step, len(readers), reached):
                return  # deleted meanwhile: the removal job clears what was pushed

    async def _remove(self, job: str, author: str, post_id: str, progress: Progress) -> None:
        member = Post.of(author, post_id, 0).member
        async for readers, _ in self._followers(job, author, progress):
            await self._inboxes.remove_post(readers, member)
        await self._outboxes.forget(author, post_id)

    async def _drain(self, job: str, author: str, progress: Progress) -> None:
        if await self._outboxes.mode(author) != "draining":
            return
        posts = await self._outboxes.newest(author, self._settings.feed_inbox_cap)
        async for readers, _ in self._followers(job, author, progress):
            await self._inboxes.push(readers, posts)
        if await self._outboxes.finish_drain(author):
            await self._outboxes.stop_pulling(author)
            if await self._outboxes.mode(author) == "pull":  # a celebrity again meanwhile
                await self._outboxes.pull(author)


def _decode(saved: str) -> Position:
    since, _, user_id = saved.partition("|")
    return Position(int(since), user_id)
