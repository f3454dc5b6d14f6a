"""Check a reader's home timeline against what the rules say it should hold, and repair it.

The rules (``services/timelines.py``, ``workers/timeline_jobs.py``,
``workers/timeline_events.py``) guarantee an active reader's home timeline holds, of every author it
follows whose posts are pushed, at least the newest min(TIMELINE_BACKFILL_POSTS,
TIMELINE_REBUILD_POSTS) posts, within the newest TIMELINE_READER_CAP of all of them; and nothing of
an author it does not follow, nor a deleted post. A post older than a full home timeline's oldest
entry is not missing (the cap trimmed it). Posts of pulled authors are merged on read and may stay
in home timelines from before their author's switch.

An inactive reader's home timeline is not checked: its next read rebuilds it. The repair adds what
is missing and removes what is wrong, keeping whatever was pushed meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.redis.timelines import AuthorPosts, HomeTimelines
from graphsvc.domain.drift import Drift
from graphsvc.domain.model import Side
from graphsvc.domain.timeline import Post, newest_first
from graphsvc.services.follow_pages import FollowPages
from graphsvc.services.timelines import Timelines
from graphsvc.settings import TimelineSettings


class TimelineCheck:
    """``max_following``: MAX_FOLLOWING, the longest following list a reader's walk reads."""

    def __init__(
        self,
        author_posts: AuthorPosts,
        home_timelines: HomeTimelines,
        follow_pages: FollowPages,
        timelines: Timelines,
        settings: TimelineSettings,
        max_following: int,
    ) -> None:
        self._author_posts = author_posts
        self._home_timelines = home_timelines
        self._follow_pages = follow_pages
        self._timelines = timelines
        self._settings = settings
        self._max_following = max_following

    async def _diff(self, reader: str) -> tuple[list[Post], list[str]] | None:
        """(missing posts, wrong members) of an active reader's home timeline; None when
        inactive."""
        author_posts, home_timelines = self._author_posts, self._home_timelines
        settings = self._settings
        if not await home_timelines.is_active(reader):
            return None
        home = await home_timelines.entries(
            reader
        )  # before the rules: a backfill landing after is kept
        following = await self._follow_pages.walk(Side.FOLLOWING, reader, None, self._max_following)
        followed = [e.user_id for e in following]
        pushing = await author_posts.pushing_among(followed)
        each = min(settings.timeline_backfill_posts, settings.timeline_rebuild_posts)
        must = newest_first(await author_posts.post_pages(pushing, None, each))
        must = must[: settings.timeline_reader_cap]
        held = {p.member for p in home}
        floor = home[-1] if len(home) >= settings.timeline_reader_cap else None
        missing = [p for p in must if p.member not in held and (floor is None or p > floor)]
        deleted = await author_posts.deleted_among([p.member for p in home])
        # The walk leaves inactive users out: an author it lacks may still be followed (its
        # posts are hidden on read, not wrong), so Neo4j decides.
        allowed = set(followed) | await self._timelines.followed_among(
            reader, sorted({p.author for p in home} - set(followed))
        )
        wrong = [p.member for p in home if p.author not in allowed or p.member in deleted]
        return missing, wrong

    async def check(self, readers: Sequence[str]) -> list[Drift]:
        drifts: list[Drift] = []
        for reader in readers:
            diff = await self._diff(reader)
            if diff is None:
                continue
            missing, wrong = diff
            if missing:
                found = [p.member for p in missing[:5]]
                drifts.append(Drift(reader, "missing from the home timeline", found, None))
            if wrong:
                drifts.append(Drift(reader, "not for this home timeline", None, wrong[:5]))
        return drifts

    async def repair(self, readers: Sequence[str]) -> int:
        """Repair the home timelines of these readers that need it; returns how many did."""
        repaired = 0
        for reader in readers:
            diff = await self._diff(reader)
            if diff is not None and (diff[0] or diff[1]):
                await self._home_timelines.repair(reader, *diff)
                repaired += 1
        return repaired
