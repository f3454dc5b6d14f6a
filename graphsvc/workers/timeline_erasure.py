"""The timeline side of an erasure (``moderation_jobs.py`` runs it), done before the id can
be taken again: nothing the erased user published may reach the next user with the id, in
a home timeline, an author's posts, a pull or a backfill.

1. Close the user's timeline, first: it publishes nothing more (409 ``user_erasing``), its
   posts go (no read pulls it, no backfill or rebuild pushes it), readers stop pulling it,
   and a fan-out of any of its posts stops at its next step. Then wait until none of its
   timeline jobs (fan-outs, removals, a drain) is queued or running, so none pushes a post
   into a home timeline the erasure has already cleaned. A job held by a stopped worker is taken up
   once its lease runs out; a fan-out stops at its next step, a removal may walk on. The
   erasure waits at most two leases per round, then lets its job be claimed again, so it
   resumes in a later round until no timeline job of the user is left.
2. Each follow the erasure removes takes the followed user's posts out of the follower's
   home, as an unfollow's event does (``timeline_events.py``), in the erasure's own batches
   of edges, recorded with the batch and so replayed with it on resume. So every home timeline the
   user's posts could have reached, pushed, backfilled, drained or rebuilt (only followers'
   are), is cleaned before the node goes.
3. Once the node is gone: forget the user's posts, post states, mode (the close) and
   tombstones while the timeline is still closed (``timeline_reopen.lua``: a post the next user
   with the id published first stays), its pulls, its own home timeline and marks, its
   exclusions, and its posts in the timelines of the lists that held it (then the index of
   those lists). The timelines of its own lists go with the lists, batch by batch. A process
   stopped between the node's deletion and this step leaves the timeline closed: the next
   publish of the id finds no erasure in Neo4j and reopens it then
   (``services/timelines.py``).

An home timeline that kept a post of the user after the reader unfollowed it (a backfill applied
after the unfollow's removal) is not cleaned: the read's follow filter hides it until the reader
follows the id again, and reconcile finds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from graphsvc.adapters.redis.exclusions import ExclusionCache
from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.adapters.redis.list_holders import ListHolders
from graphsvc.adapters.redis.notifications import NotificationStreams
from graphsvc.adapters.redis.timelines import (
    LIST,
    AuthorPosts,
    HomeTimelines,
)
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.settings import TimelineSettings

POLL_SECONDS = 0.1  # how often the close looks whether the author's jobs have ended


class TimelineErasure:
    def __init__(
        self,
        author_posts: AuthorPosts,
        home_timelines: HomeTimelines,
        holders: ListHolders,
        exclusions: ExclusionCache,
        notifications: NotificationStreams,
        queue: JobQueue,
        settings: TimelineSettings,
    ) -> None:
        self._author_posts = author_posts
        self._home_timelines = home_timelines
        self._holders = holders
        self._exclusions = exclusions
        self._notifications = notifications
        self._queue = queue
        self._wait_seconds = 2 * settings.timeline_job_lease_seconds

    async def close(self, user_id: str) -> bool:
        """Close the user's timeline; True once none of its timeline jobs is left, False when
        some still are after the wait (the erasure tries again later)."""
        posts = await self._author_posts.close(user_id)
        await self._home_timelines.stop_pulling(user_id)
        jobs = [f"{kind}|{user_id}|{post}" for post in posts for kind in ("push", "remove")]
        jobs.append(f"drain|{user_id}")
        clock = asyncio.get_running_loop().time
        deadline = clock() + self._wait_seconds
        while jobs := await self._queue.queued_among(jobs):
            if clock() > deadline:
                return False
            stop_if_asked()
            await asyncio.sleep(POLL_SECONDS)
        return True

    async def unfollowed(self, removals: Sequence[tuple[str, str, int]]) -> None:
        """Removed follows (follower, followed, version): the followed users' posts leave the
        followers' home timelines."""
        await self._home_timelines.remove_authors([(src, dst) for src, dst, _ in removals])

    async def forget(self, user_id: str) -> None:
        """The node is gone: nothing of the user's timeline is kept for the next one."""
        await self._author_posts.reopen(user_id)
        await self._home_timelines.stop_pulling(user_id)
        await self._home_timelines.forget_reader(user_id)
        await self._exclusions.forget(user_id)
        await self._notifications.forget(user_id)
        holding = await self._holders.of(user_id)
        await self._home_timelines.remove_authors([(lst, user_id) for lst in holding], LIST)
        await self._holders.forget(user_id)

    async def lists_deleted(self, lists: Sequence[str]) -> None:
        """The user's own lists went: their timelines go with them."""
        for list_id in lists:
            await self._home_timelines.forget_reader(list_id, LIST)
