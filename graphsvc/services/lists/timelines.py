"""List timelines: the posts of a curate list's members, newest first, as the viewer may read
them, with the home timeline's push/pull split.

- **Push.** A list that is read (its mark ``lr:{L}`` renewed by every read, for
  TIMELINE_ACTIVE_DAYS) has a timeline of its own in Redis (``lt:{L}``, the newest
  TIMELINE_READER_CAP posts), into which the fan-out of an ordinary member's post pushes, as
  into its followers' home timelines: the fan-out finds the lists that hold the author in
  ``la:{a}`` (``adapters/redis/list_holders.py``). Every follower of the list and its owner
  read that one timeline: following a list copies nothing.
- **Pull.** A celebrity member's posts are pulled on read from its posts, as a home
  timeline pulls them; the list's pulled members are cached under the list's member version
  (moved by every change of its members) and the switches' generation.
- **Rebuild.** A list not read for TIMELINE_ACTIVE_DAYS gets no pushes; its next read builds
  its timeline again from its members' posts (TIMELINE_REBUILD_POSTS each), registering each
  member's ``la:{a}`` before reading its posts, so a post published meanwhile is either read
  by the rebuild or pushed.

Who may show is decided on every read, not by what was pushed: one Neo4j read per round checks
that the viewer may read the list and keeps the authors that are still active members of the
list (as the list's own pages count them) and in no block with the viewer either way; the
viewer's mutes hide their posts too. A viewer that may not read the list gets its 404 before
any work is done for it (a rebuild, the pulled members). So a removed member, a block, a suspension or
a deleted post never shows, whatever the background work has done yet; and what the list's
timeline holds is shared by all its readers, so no reader's filters change another's.

A moderation list has no timeline (409 ``list_purpose``). Changes of members reach the
timeline right after their commit (``members_changed``: backfills, removals, the member
version); a Redis outage then costs completeness (a member's older posts), never privacy.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.list_holders import ListHolders
from graphsvc.adapters.redis.timelines import (
    LIST,
    AuthorPosts,
    HomeTimelines,
    TimelineRead,
    authors_of,
)
from graphsvc.domain.cursor import CursorCodec
from graphsvc.domain.errors import ListPurposeConflict
from graphsvc.domain.lists import Purpose, list_not_found, may_see
from graphsvc.domain.privacy import Viewer
from graphsvc.domain.timeline import Post, TimelinePage, newest_first
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.paging import Pager
from graphsvc.services.timeline_merge import SCAN_MAX, merged, paged
from graphsvc.services.timelines import MuteFilter
from graphsvc.settings import PageSettings, TimelineSettings

log = logging.getLogger(__name__)


class ListTimelines:
    def __init__(
        self,
        store: ListStore,
        author_posts: AuthorPosts,
        timelines: HomeTimelines,
        holders: ListHolders,
        sync: MirrorSync,
        mutes: MuteFilter,
        settings: TimelineSettings,
        pages: PageSettings,
    ) -> None:
        self._store = store
        self._author_posts = author_posts
        self._timelines = timelines
        self._holders = holders
        self._sync = sync
        self._mutes = mutes
        self._settings = settings
        self._pager = Pager(pages)
        self._codec = CursorCodec(pages.cursor_secret)

    async def timeline(
        self,
        owner: str,
        list_id: str,
        viewer: Viewer,
        limit: int | None,
        cursor: str | None,
    ) -> TimelinePage:
        """The list's timeline for the viewer. What a viewer that may not read it gets (404,
        or 409 for a moderation list) is checked before any work a read could do for such a
        viewer (a rebuild, the pulled members), and whenever a round's own check of the right
        fails; so an ordinary read costs Neo4j one query per round."""

        async def one_round(position: Post | None, want: int) -> tuple[list[Post], Post | None]:
            return await self._round(owner, list_id, viewer, position, want)

        # Readers share the list's posts but not their filters: each viewer's own cursors.
        scope = f"list-timeline|{list_id}|{viewer.user_id or ''}|{int(viewer.sees_all)}"
        return await paged(self._codec, self._pager, scope, limit, cursor, one_round)

    async def _round(
        self,
        owner: str,
        list_id: str,
        viewer: Viewer,
        position: Post | None,
        want: int,
    ) -> tuple[list[Post], Post | None]:
        timelines = self._timelines
        read = await timelines.read(list_id, position, want, SCAN_MAX, LIST)
        if read.rebuild:
            await self._check(owner, list_id, viewer)
            await self._rebuild(owner, list_id)
            read = await timelines.read(list_id, position, want, SCAN_MAX, LIST)
        pulled = list(read.pulled)
        if read.cache_generation is None or read.cache_generation != read.generation:
            await self._check(owner, list_id, viewer)
            pulled = await self._pulled_members(owner, list_id, read)
        purpose, shown = await self._shown(
            owner, list_id, viewer, [*pulled, *authors_of(read.posts)]
        )
        if purpose is not Purpose.CURATE:
            await self._check(owner, list_id, viewer)  # its answer; none if it changed back
            return [], None
        posts = [p for p in read.posts if p.author in shown]
        pulled = [a for a in pulled if a in shown]
        return await merged(self._author_posts, self._sync, read, posts, pulled, position, want)

    async def _check(self, owner: str, list_id: str, viewer: Viewer) -> None:
        found = await self._store.get(owner, list_id, viewer.user_id, count=False)
        if found is None or not may_see(found[0], viewer, owner_active=found[1], blocked=found[2]):
            raise list_not_found(owner, list_id)
        if found[0].purpose is not Purpose.CURATE:
            raise ListPurposeConflict(f"list {list_id!r} is a moderation list: it has no timeline")

    async def _shown(
        self, owner: str, list_id: str, viewer: Viewer, authors: list[str]
    ) -> tuple[Purpose | None, set[str]]:
        """The list's purpose when the viewer may read it, and the authors whose posts it sees
        in the list now: active members in no block with the viewer, less those it mutes."""
        purpose, shown = await self._store.timeline_authors(
            owner,
            list_id,
            everything=viewer.is_owner(owner),
            viewer=viewer.user_id,
            authors=list(dict.fromkeys(authors)),
        )
        if viewer.user_id and shown:
            shown -= await self._mutes.muted_among(viewer.user_id, sorted(shown))
        return purpose, shown

    async def _pulled_members(self, owner: str, list_id: str, read: TimelineRead) -> list[str]:
        members = await self._store.member_ids(owner, list_id)
        pulled = await self._timelines.pulled_among(members)
        await self._timelines.cache_pulled(
            list_id, read.follow_generation, read.generation, pulled, LIST
        )
        return pulled

    async def _rebuild(self, owner: str, list_id: str) -> None:
        """The timeline of a list that was not read: its members' newest posts (those whose
        posts are pushed), after registering the list with each member for the fan-outs."""
        settings = self._settings
        members = await self._store.member_ids(owner, list_id)
        await self._holders.add(list_id, members)
        pushing = await self._author_posts.pushing_among(members)
        pages = await self._author_posts.post_pages(pushing, None, settings.timeline_rebuild_posts)
        newest = newest_first(pages)[: settings.timeline_reader_cap]
        await self._timelines.push([list_id], newest, LIST)
        await self._timelines.rebuilt(list_id, LIST)

    async def members_changed(
        self, list_id: str, added: Sequence[str], removed: Sequence[str]
    ) -> None:
        """After a change of the list's members committed: the fan-outs know whom the list
        holds, its pulled members are computed again, an added member's newest posts are
        backfilled and a removed one's taken out (reads filter them meanwhile)."""
        timelines = self._timelines
        try:
            await self._holders.add(list_id, added)
            await self._holders.remove(list_id, removed)
            await timelines.invalidate([list_id], LIST)
            if not await timelines.active_among([list_id], LIST):
                return  # its next read rebuilds it
            pushing = await self._author_posts.pushing_among(list(added))
            backfill = self._settings.timeline_backfill_posts
            newest = await self._author_posts.newest_many(pushing, backfill) if backfill else {}
            posts = newest_first(list(newest.values()))
            await timelines.push([list_id], posts, LIST)
            await timelines.remove_authors([(list_id, member) for member in removed], LIST)
        except REDIS_DOWN as exc:  # the change stands; reads filter by Neo4j's members
            log.warning("list %s timeline not updated after a change (%s)", list_id, exc)

    async def deleted(self, list_id: str) -> None:
        try:
            await self._timelines.forget_reader(list_id, LIST)
        except REDIS_DOWN as exc:  # its keys expire with its mark; nobody can read them
            log.warning("deleted list %s timeline not dropped (%s)", list_id, exc)
