"""Bells in the background: a new post's ``posted`` notification rung into the notification
stream of each user who rings its author's bell (a follow with ``notify`` on), durable across
restarts.

One job per post (``author|post``), queued in Redis (``{feed}:bells``) when the post is
published, and run as the timelines' fan-outs are (``timeline_jobs.py``, ``concurrency/jobs.py``):
by a worker, under a lease, NOTIFY_FANOUT_BATCH ringers a step, each step one Neo4j seek for
the next ringers in id order (``bells/ringers_page``: the same work at any depth, for ten
ringers or a million; the next page is read while this one is rung) and one pipelined Redis
round trip of ring scripts, the position saved after every step. A step run again (its process stopped before saving) rings nobody twice
(``notification_ring.lua``). The queue holds at most WORKER_QUEUE_MAX jobs: past it, a
publish is refused (503) before it changes anything.

Who is rung is decided here: the ringers active now, whatever they mute (a mute hides a
notification when it is delivered, and ends when it ends). What is delivered is decided on
delivery (``services/notifications.py``): the reader's mutes and blocks then, the author's
status then, and whether the post is still there.
"""

from __future__ import annotations

import asyncio
import logging

from graphsvc.adapters.neo4j.bells import BellStore
from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.adapters.redis.notifications import NotificationStreams
from graphsvc.adapters.redis.timelines import AuthorPosts
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.errors import QueueFull
from graphsvc.domain.timeline import Post
from graphsvc.settings import NotificationSettings, TimelineSettings, WorkerSettings

log = logging.getLogger(__name__)


class BellJobs:
    """The ringing of bells as a kind of durable job (``concurrency/jobs.py``)."""

    name = "bells"

    def __init__(
        self,
        bells: BellStore,
        streams: NotificationStreams,
        author_posts: AuthorPosts,
        queue: JobQueue,
        jobs: Jobs,
        settings: NotificationSettings,
        timelines: TimelineSettings,
        worker: WorkerSettings,
    ) -> None:
        self._bells = bells
        self._streams = streams
        self._author_posts = author_posts
        self._queue = queue
        self._jobs = jobs
        self._batch = settings.notify_fanout_batch
        self.lease_seconds = timelines.timeline_job_lease_seconds
        self.most = worker.worker_jobs
        self._queue_max = worker.worker_queue_max

    async def ensure_room(self) -> None:
        """Refuse new work while the queue is full (the caller has changed nothing yet)."""
        if await self._queue.depth() >= self._queue_max:
            raise QueueFull(
                f"the bells' job queue holds WORKER_QUEUE_MAX ({self._queue_max}) jobs; "
                "retry once workers catch up",
                headers={"Retry-After": "5"},
            )

    async def start(self, author: str, post_id: str) -> None:
        """Queue the post's ringing, and run it here when this process runs its own background
        work; else wake a waiting worker. A job already queued is left to its holder."""
        job, here = f"{author}|{post_id}", self._jobs.here
        if await self._queue.enqueue(job, hold=self.lease_seconds if here else None):
            await self._jobs.start(self, job)

    async def due(self, limit: int) -> list[str]:
        return await self._queue.due(limit)

    async def run(self, key: str, progress: Progress) -> None:
        await self._queue.hold(key, self.lease_seconds)  # out of the due list while it runs
        author, _, post_id = key.partition("|")
        state = await self._author_posts.state(author, post_id)
        if state is not None and state.get("bells") == "ringing":  # else deleted, or done
            post = Post.of(author, post_id, int(state["at"]))
            await self._ring(key, post, progress)
            await self._streams.rung(post)
        await self._queue.finish(key)

    async def _ring(self, job: str, post: Post, progress: Progress) -> None:
        """Each step rings its page while Neo4j reads the next one."""
        after = await self._queue.position(job) or ""
        ahead = asyncio.ensure_future(self._bells.ringers(post.author, after, self._batch))
        try:
            while True:
                page = await ahead
                last = len(page) < self._batch
                if not last:
                    after = page[-1][0]
                    ahead = asyncio.ensure_future(
                        self._bells.ringers(post.author, after, self._batch)
                    )
                active = [ringer for ringer, inactive in page if not inactive]
                progress.add("rung", await self._streams.ring(active, post))
                if last:
                    return
                await self._queue.advance(job, after, self.lease_seconds)
        finally:
            ahead.cancel()
