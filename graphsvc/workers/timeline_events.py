"""Timelines follow the graph: a consumer group on the event stream (``graph:events``).

- A follow of an ordinary author backfills the author's newest TIMELINE_BACKFILL_POSTS posts into
  the follower's home timeline (if the follower reads its timeline; else its next read rebuilds it).
  A followed celebrity needs nothing: the follower's list of pulled authors is recomputed,
  since the follow moved the follower's follow generation (``writes.py``).
- An unfollow (also one a block caused) or a block takes the author's posts out of the
  reader's home.
- An erasure needs nothing here: its job does the timeline's part before the id can be taken
  again (``timeline_erasure.py``), where an event applied late would drop the author's posts and
  home timeline of the next user with the id.

Delivery is at least once (an entry is acked after it was applied; entries a stopped
consumer held are claimed by another after CLAIM_IDLE_MS) and every step is idempotent. The
order of events of one edge can differ from the order of its changes (the relay appends lost
events late), which is why reads never trust the home timeline alone: a post shows only while its
reader follows its author (``timelines.py``), so a late backfill cannot show an unfollowed
author, and reconcile repairs what the home timeline should hold.
"""

from __future__ import annotations

import logging

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.timelines import AuthorPosts, HomeTimelines
from graphsvc.settings import TimelineSettings
from graphsvc.workers.event_consumer import BATCH, EventConsumer

log = logging.getLogger(__name__)

# After a short read, wait this long before the next one: under a stream of follows each read
# then carries many entries (its six round trips shared by all), for at most this much delay
# of a backfill; one entry at a time cost a large share of a process's CPU
# (docs/performance.md, "The timeline consumer's linger").
LINGER_SECONDS = 0.05


class TimelineEvents(EventConsumer):
    def __init__(
        self,
        author_posts: AuthorPosts,
        home_timelines: HomeTimelines,
        stream: EventStream,
        settings: TimelineSettings,
    ) -> None:
        super().__init__(stream, settings.timeline_consumer_group)
        self._author_posts = author_posts
        self._home_timelines = home_timelines
        self._backfill = settings.timeline_backfill_posts

    async def round(self) -> bool:
        """A round of the worker's consumer loop: one batch, waited for at most a second.
        After a short batch the next read lingers LINGER_SECONDS; otherwise it starts at
        once (a full batch, or an empty one, whose read was the wait). While Redis is down
        or failing over, entries wait in the stream."""
        return not 0 < await self.consume(block_ms=1_000) < BATCH

    async def apply(self, events: list[dict[str, str]]) -> None:
        """Apply events in stream order; the lookups of a batch's follows are batched."""
        follows = [(e["src"], e["dst"]) for e in events if e.get("type") == "follow"]
        backfills = await self._backfills(follows)
        # Their lists of pulled authors (the write did it too, unless Redis was down then).
        moved = {e["src"] for e in events if e.get("type") in ("follow", "unfollow", "block")}
        await self._home_timelines.invalidate(
            sorted(moved | {e["dst"] for e in events if e.get("type") == "block"})
        )
        for event in events:
            try:
                await self._apply_one(event, backfills)
            except REDIS_DOWN:
                raise  # not acked: applied again once Redis answers
            except Exception:  # one bad entry must not stop the consumer for good
                log.exception("timeline consumer skipped event %s", event.get("id"))

    async def _apply_one(self, event: dict[str, str], backfills: dict) -> None:
        kind, src, dst = event.get("type"), event.get("src", ""), event.get("dst", "")
        if kind == "follow" and (src, dst) in backfills:
            await self._home_timelines.push([src], backfills[(src, dst)])
        elif kind == "unfollow":
            await self._home_timelines.remove_author(src, dst)
        elif kind == "block":
            await self._home_timelines.remove_author(src, dst)
            await self._home_timelines.remove_author(dst, src)

    async def _backfills(self, follows: list[tuple[str, str]]) -> dict:
        """For each follow whose follower reads its timeline and whose author pushes: the
        author's newest posts."""
        if not follows or not self._backfill:
            return {}
        readers = sorted({reader for reader, _ in follows})
        authors = sorted({author for _, author in follows})
        active = set(await self._home_timelines.active_among(readers))
        pushing = set(await self._author_posts.pushing_among(authors))
        wanted = [(r, a) for r, a in follows if r in active and a in pushing]
        newest = await self._author_posts.newest_many(
            sorted({a for _, a in wanted}), self._backfill
        )
        return {(r, a): newest[a] for r, a in wanted if newest.get(a)}
