"""Bells in the background: a new post's ``posted`` notification rung into the notification
stream of each user who rings its author's bell (a follow with ``notify`` on), durable across
restarts.

One job per post (``author|post``), queued in Redis (``{feed}:bells``) when the post is
published, and run as the timelines' fan-outs are (``timeline_jobs.py``, ``concurrency/jobs.py``):
by a worker, under a lease, NOTIFY_FANOUT_BATCH ringers a step, each step one Neo4j seek for
the next ringers in id order (``bells/ringers_page``: the same work at any depth, for ten
ringers or a million; the next page is read while this one is rung) and one pipelined Redis
round trip of ring scripts, the position saved after every step. A step run again (its
process stopped before saving) rings nobody twice (``notification_ring.lua``): only a run's
first step can be such a step, and only it looks for repeats. The queue holds at most WORKER_QUEUE_MAX jobs: past it, a
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
from graphsvc.adapters.redis.bell_flags import BellFlags
from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.adapters.redis.notifications import NotificationStreams
from graphsvc.adapters.redis.timelines import AuthorPosts
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.timeline import Post
from graphsvc.settings import NotificationSettings, TimelineSettings, WorkerSettings
from graphsvc.workers.queued_jobs import QueuedJobs

log = logging.getLogger(__name__)


class BellJobs(QueuedJobs):
    """The ringing of bells as a kind of durable job (``concurrency/jobs.py``)."""

    name = "bells"
    what = "the bells' job queue"

    def __init__(
        self,
        bells: BellStore,
        streams: NotificationStreams,
        flags: BellFlags,
        author_posts: AuthorPosts,
        queue: JobQueue,
        jobs: Jobs,
        settings: NotificationSettings,
        timelines: TimelineSettings,
        worker: WorkerSettings,
    ) -> None:
        super().__init__(queue, jobs, timelines.timeline_job_lease_seconds, worker)
        self._bells = bells
        self._streams = streams
        self._flags = flags
        self._author_posts = author_posts
        self._batch = settings.notify_fanout_batch

    async def start(self, author: str, post_id: str) -> None:
        await self._start(f"{author}|{post_id}")

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
        """Each step rings its page while Neo4j reads the next one. A job that finds no
        ringer at all from the start says so (``bell_flags.py``): the author's next posts
        queue no ringing job, until a follow with notify on is mirrored."""
        after = await self._queue.position(job) or ""
        token = await self._flags.token(post.author) if not after else None
        ahead = asyncio.ensure_future(self._bells.ringers(post.author, after, self._batch))
        again = True  # only a run's first step may have run before (its position unsaved)
        try:
            while True:
                page = await ahead
                last = len(page) < self._batch
                if not page and not after and token is not None:
                    await self._flags.quiet(post.author, token)
                if not last:
                    after = page[-1][0]
                    ahead = asyncio.ensure_future(
                        self._bells.ringers(post.author, after, self._batch)
                    )
                active = [ringer for ringer, inactive in page if not inactive]
                progress.add("rung", await self._streams.ring(active, post, again=again))
                again = False
                if last:
                    return
                await self._queue.advance(job, after, self.lease_seconds)
        finally:
            ahead.cancel()
