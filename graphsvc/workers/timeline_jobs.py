"""Timeline fan-outs in the background, durable across restarts.

Three kinds of job, each named by what it works on:

- ``push|author|post``: push a new post of an ordinary author into the timeline of every
  active list that holds it (``services/lists/timelines.py``), then into every active follower's
  home, TIMELINE_FANOUT_BATCH followers a step (the follower list comes from the mirror, and
  from Neo4j past its hot list), each step one pipelined round trip of push scripts.
- ``remove|author|post``: take a deleted post out of its lists' and every follower's home
  timeline.
- ``drain|author``: an author fallen back below the celebrity threshold: push its posts into
  its lists' and every active follower's home timeline, then stop readers pulling it (``domain/timeline.py``).

A job is queued in Redis (``{feed}:jobs``) before it starts, and its position in the walk of
followers is saved after every step; it runs under a lease as every durable job does
(``concurrency/jobs.py``, lasting TIMELINE_JOB_LEASE_SECONDS). A serving process only queues it,
due at once, and wakes a waiting worker (``graphsvc worker``), which claims due jobs then and
at least every WORKER_POLL_SECONDS. A job's score in the queue is when it is due: a running
job holds it a lease's length ahead at every step, so the workers' claims skip it while it
runs and find it again once its worker stopped; the claim resumes it at its saved position. A
process that runs its own background work (the CLI, tests) queues the job held and runs it
at once. The queue holds at most WORKER_QUEUE_MAX jobs: past it, a publish or delete is
refused (503) before it changes anything. Every step is idempotent, so a step run twice
changes nothing. Followers who follow during a push are reached by the follow event's
backfill instead (``timeline_events.py``); a post deleted during its push stops it.
"""

from __future__ import annotations

import logging

from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.adapters.redis.list_holders import ListHolders
from graphsvc.adapters.redis.timelines import LIST, AuthorPosts, HomeTimelines
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Entry, Side
from graphsvc.domain.timeline import Post
from graphsvc.services.follow_pages import FollowPages
from graphsvc.settings import TimelineSettings, WorkerSettings
from graphsvc.workers.queued_jobs import QueuedJobs

log = logging.getLogger(__name__)


class TimelineJobs(QueuedJobs):
    """The timeline fan-outs as a kind of durable job (``concurrency/jobs.py``)."""

    name = "timeline"
    what = "the timeline job queue"

    def __init__(
        self,
        author_posts: AuthorPosts,
        home_timelines: HomeTimelines,
        holders: ListHolders,
        queue: JobQueue,
        follow_pages: FollowPages,
        jobs: Jobs,
        settings: TimelineSettings,
        worker: WorkerSettings,
    ) -> None:
        super().__init__(queue, jobs, settings.timeline_job_lease_seconds, worker)
        self._author_posts = author_posts
        self._home_timelines = home_timelines
        self._holders = holders
        self._follow_pages = follow_pages
        self._settings = settings

    async def start(self, job: str) -> None:
        await self._start(job)

    async def wait(self, seconds: float) -> None:
        """Until a serving process queues a job, or ``seconds`` have passed."""
        await self._queue.wait(seconds)

    async def run(self, key: str, progress: Progress) -> None:
        await self._queue.hold(key, self.lease_seconds)  # out of the due list while it runs
        kind, _, rest = key.partition("|")
        author, _, post_id = rest.partition("|")
        match kind:
            case "push":
                await self._push(key, author, post_id, progress)
            case "remove":
                await self._remove(key, author, post_id, progress)
            case "drain":
                await self._drain(key, author, progress)
            case _:
                log.error("unknown timeline job %r dropped", key)
        await self._queue.finish(key)

    async def _followers(self, job: str, author: str, progress: Progress):
        """The author's followers in steps, from the job's saved position; each step's
        position is saved (and the lease renewed) once the caller's work on it is done."""
        saved = await self._queue.position(job)
        position = _decode(saved) if saved else None
        size = self._settings.timeline_fanout_batch
        while True:
            followers: list[Entry] = await self._follow_pages.walk(
                Side.FOLLOWERS, author, position, size
            )
            yield [f.user_id for f in followers], len(followers) < size
            progress.add("followers", len(followers))
            if len(followers) < size:
                return
            position = followers[-1].position
            await self._queue.advance(
                job, f"{position.since}|{position.user_id}", self.lease_seconds
            )

    async def _push(self, job: str, author: str, post_id: str, progress: Progress) -> None:
        state = await self._author_posts.state(author, post_id)
        if state is None or state["state"] != "fanning_out":
            return  # deleted, or done by a run that stopped before forgetting the job
        post = Post.of(author, post_id, int(state["at"]))
        await self._home_timelines.push(await self._holders.of(author), [post], LIST)
        async for readers, last in self._followers(job, author, progress):
            reached, _ = await self._home_timelines.push(readers, [post])
            step = "done" if last else "fanning_out"
            if not await self._author_posts.progress(author, post_id, step, len(readers), reached):
                return  # deleted meanwhile: the removal job clears what was pushed

    async def _remove(self, job: str, author: str, post_id: str, progress: Progress) -> None:
        member = Post.of(author, post_id, 0).member
        await self._home_timelines.remove_post(await self._holders.of(author), member, LIST)
        async for readers, _ in self._followers(job, author, progress):
            await self._home_timelines.remove_post(readers, member)
        await self._author_posts.forget(author, post_id)

    async def _drain(self, job: str, author: str, progress: Progress) -> None:
        if await self._author_posts.mode(author) != "draining":
            return
        posts = await self._author_posts.newest(author, self._settings.timeline_reader_cap)
        await self._home_timelines.push(await self._holders.of(author), posts, LIST)
        async for readers, _ in self._followers(job, author, progress):
            await self._home_timelines.push(readers, posts)
        if await self._author_posts.finish_drain(author):
            await self._home_timelines.stop_pulling(author)
            if await self._author_posts.mode(author) == "pull":  # a celebrity again meanwhile
                await self._home_timelines.start_pulling(author)


def _decode(saved: str) -> Position:
    since, _, user_id = saved.partition("|")
    return Position(int(since), user_id)
