"""Lists and counts: followers, following (and its celebrities), exact counts.

Reads come from the mirror: a page is one Lua script over the user's sorted set (inactive
users left out), counts one HMGET. A cold mirror is built for that user from Neo4j and then
served (``mirror_sync``); a page that runs past a capped hot list continues in Neo4j from the
same keyset position, so a client walks a celebrity's followers without seeing the seam. With
Redis unreachable, every read is answered from Neo4j instead (``fallback``). Lists that need
the graph itself (friends, common, familiar) are in ``graph_pages``.

Privacy: a page or the counts are read for a viewer, and the owner's setting is checked
before the answer leaves (``privacy``): a hidden list is a 403, hidden counts are None, never
an empty answer. The mirror's read takes the owner's settings along in its own round trip
(``PrivacyProbe``), so a read for a viewer costs what a read for an admin does; the page is
checked right after that read, before anything is derived from it (``PageCheck``). A page
filtered ``not_followed_back`` / ``not_following_back`` is read from both of the owner's
lists, and needs both visible; celebrities are only those whose counts the viewer may see.

Cost bounds: a page read from Neo4j (past the hot list, or without Redis) is a seek in an
index of the user's list at the cursor's position, stopped at the page's size: the same work
at any depth and for any number of followers, so a cursor replayed deep in a celebrity's
followers costs what a first page does. A read from Neo4j where the mirror usually
answers is noted (``request_notes.note_graph_read``), so the caller's budget pays for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from graphsvc.adapters.neo4j.pages import PageStore
from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.neo4j.requests import RequestStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.redis.mirror_reads import HotPage, MirrorReads
from graphsvc.adapters.redis.privacy import PrivacyProbe
from graphsvc.adapters.redis.statuses import StatusesMissing
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.request_notes import note_graph_read
from graphsvc.domain.cursor import Position
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Counts, Entry, Page, ShownCounts, Side
from graphsvc.domain.privacy import EVERYONE, Viewer, other_owners
from graphsvc.domain.time_window import WHOLE, TimeWindow
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.paging import Pager
from graphsvc.services.privacy import PrivacyRules
from graphsvc.settings import PageSettings

# A reader of a list's entries: (side, user, after, wanted) -> up to ``wanted`` entries.
EntriesOf = Callable[[Side, str, Position | None, int], Awaitable[list[Entry]]]


class FollowPages:
    def __init__(
        self,
        pages: PageStore,
        snapshots: SnapshotStore,
        edges: EdgeStore,
        mirror: MirrorReads,
        sync: MirrorSync,
        privacy: PrivacyRules,
        requests: RequestStore,
        breaker: Breaker,
        settings: PageSettings,
    ) -> None:
        self._pages = pages
        self._snapshots = snapshots
        self._edges = edges
        self._mirror = mirror
        self._sync = sync
        self._privacy = privacy
        self._requests = requests
        self._breaker = breaker
        self._settings = settings
        self._pager = Pager(settings)
        self._entries = PageEntries(pages, mirror, sync, breaker).entries

    # -- counts ---------------------------------------------------------------------------------

    async def counts_for(self, user_id: str, viewer: Viewer) -> ShownCounts:
        """The counts as the viewer may see them: None when the user's setting hides them;
        the user itself also sees how many follow requests wait for its answer (a read of
        Neo4j, for its own view only)."""
        validate_user_id(user_id)
        if viewer.user_id == user_id:
            counts, pending = await self.counts(user_id), await self._requests.pending(user_id)
            return ShownCounts(counts, pending)
        if viewer.sees_all:
            return ShownCounts(await self.counts(user_id))
        probe = PrivacyProbe([user_id])
        counts = await self.counts(user_id, probe)
        if not await self._privacy.counts_visible(user_id, viewer, probe):
            return ShownCounts(None)
        return ShownCounts(counts)

    async def counts(self, user_id: str, probe: PrivacyProbe | None = None) -> Counts:
        """Exact counts; ``probe``: the user's privacy settings read in the same round trip."""
        validate_user_id(user_id)

        async def mirrored() -> Counts:
            counts = await self._mirror.counts(user_id, probe)
            return counts if counts is not None else await self._sync.build_cold_counts(user_id)

        async def from_neo4j() -> Counts:
            snapshot = (await self._snapshots.snapshots([user_id])).get(user_id)
            return snapshot.totals if snapshot is not None else Counts.zero()

        return await self._breaker.read("counts", mirrored, from_neo4j)

    def is_celebrity(self, counts: Counts) -> bool:
        return counts.followers >= self._settings.celebrity_followers

    # -- followers and following ----------------------------------------------------------------

    async def followers(
        self,
        user_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        viewer: Viewer = EVERYONE,
        not_followed_back: bool = False,
        window: TimeWindow = WHOLE,
    ) -> Page:
        """Who follows the user, newest first; optionally only those it does not follow (an
        answer read from both of its lists), only follows made within ``window``. 403
        ``network_hidden`` when the user's setting hides a list the answer is read from from
        the viewer."""
        validate_user_id(user_id)
        scope = "followers-not-followed-back" if not_followed_back else "followers"
        reads = [(user_id, Side.FOLLOWERS)]
        if not_followed_back:
            reads.append((user_id, Side.FOLLOWING))
        check = PageCheck(self._privacy, reads, viewer)
        entries = check.after(partial(self._entries, probe=check.probe))

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            found = await self._visible(
                Side.FOLLOWERS, user_id, window.start(after), wanted, not_followed_back, entries
            )
            return window.keep(found)

        page = await self._pager.page(f"{scope}|{user_id}", limit, cursor, fetch)
        await check()
        return page

    async def following(
        self,
        user_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        viewer: Viewer = EVERYONE,
        not_following_back: bool = False,
        celebrities_only: bool = False,
        window: TimeWindow = WHOLE,
    ) -> Page:
        """Whom the user follows, newest first; optionally only those not following back (an
        answer read from both of its lists), only celebrities (at least CELEBRITY_FOLLOWERS
        followers, among users whose counts the viewer may see), or both, and only follows
        made within ``window``. 403
        ``network_hidden`` when the user's setting hides a list the answer is read from from
        the viewer."""
        validate_user_id(user_id)
        scope = "following-not-following-back" if not_following_back else "following"
        reads = [(user_id, Side.FOLLOWING)]
        if not_following_back:
            reads.append((user_id, Side.FOLLOWERS))
        check = PageCheck(self._privacy, reads, viewer)
        if celebrities_only:
            scope = f"celebrities-{scope}"
            await check()  # read in Neo4j, which takes no settings along: checked before
            entries = self._celebrity_entries(viewer)
        else:
            entries = check.after(partial(self._entries, probe=check.probe))

        async def visible(after: Position | None, wanted: int) -> list[Entry]:
            found = await self._visible(
                Side.FOLLOWING, user_id, window.start(after), wanted, not_following_back, entries
            )
            return window.keep(found)

        page = await self._pager.page(f"{scope}|{user_id}", limit, cursor, visible)
        await check()
        return page

    def _celebrity_entries(self, viewer: Viewer) -> EntriesOf:
        """The celebrities among a user's followings, as the viewer may tell them: a followed
        user whose counts it may not see is never one (its celebrity bit is a count)."""
        threshold = self._settings.celebrity_followers

        async def celebrity_entries(
            side: Side, user_id: str, after: Position | None, wanted: int
        ) -> list[Entry]:
            note_graph_read("celebrities")
            return await self._pages.page(
                side,
                user_id,
                after,
                wanted,
                name="pages/celebrities_page",
                threshold=threshold,
                reader=viewer.user_id,
                everyone=viewer.sees_all,
            )

        return celebrity_entries

    async def walk(
        self, side: Side, user_id: str, after: Position | None, size: int
    ) -> list[Entry]:
        """Up to ``size`` active entries of a list strictly after ``after``, newest first: for
        background walks (fan-outs), which page by position without cursors."""
        return await self._visible(side, user_id, after, size, False)

    async def _visible(
        self,
        side: Side,
        user_id: str,
        after: Position | None,
        wanted: int,
        not_back: bool,
        entries_of: EntriesOf | None = None,
    ) -> list[Entry]:
        """Up to ``wanted`` entries of a list without inactive users (and, with ``not_back``,
        without those the user also follows / is followed by), scanning on as needed."""
        entries_of = entries_of or self._entries
        kept: list[Entry] = []
        position, chunk = after, wanted
        while len(kept) < wanted:
            entries = await entries_of(side, user_id, position, chunk)
            if entries:
                shown = entries
                if not_back:
                    shown = await without_followed_back(self._edges, side, user_id, entries)
                kept += shown
            if len(entries) < chunk:
                break
            position = entries[-1].position
            chunk = min(chunk * 4, 2_000)
        return kept[:wanted]


class PageCheck:
    """The privacy check of one page (``PrivacyRules.check_answer`` over the lists it is read
    from), made once: right after the page's first read of the mirror, which takes the
    owner's settings along (``probe``), so a page for a viewer costs no round trip of its
    own, and before anything is derived from the entries (a ``not_*_back`` filter's read of
    the relationships) or the page leaves. Called again, it does nothing."""

    def __init__(
        self, privacy: PrivacyRules, lists: list[tuple[str, Side]], viewer: Viewer
    ) -> None:
        owners = other_owners(lists, viewer)
        self.probe = PrivacyProbe(owners) if owners else None
        self._privacy = privacy
        self._lists = lists
        self._viewer = viewer
        self._done = False

    async def __call__(self) -> None:
        if not self._done:
            await self._privacy.check_answer(self._lists, self._viewer, self.probe)
            self._done = True

    def after(self, read: EntriesOf) -> EntriesOf:
        """``read``, checked once its first call has answered."""

        async def checked(
            side: Side, user_id: str, after: Position | None, wanted: int
        ) -> list[Entry]:
            entries = await read(side, user_id, after, wanted)
            await self()
            return entries

        return checked


class PageEntries:
    """Where a list's entries are read: the hot list in the mirror (built from Neo4j when
    cold), continued in Neo4j past a truncated hot list, or Neo4j alone while Redis cannot be
    reached. Inactive users are left out on every path (Neo4j filters on the same
    statuses)."""

    def __init__(
        self, pages: PageStore, mirror: MirrorReads, sync: MirrorSync, breaker: Breaker
    ) -> None:
        self._pages = pages
        self._mirror = mirror
        self._sync = sync
        self._breaker = breaker

    async def entries(
        self,
        side: Side,
        user_id: str,
        after: Position | None,
        wanted: int,
        probe: PrivacyProbe | None = None,
    ) -> list[Entry]:
        """Up to ``wanted`` entries without inactive users, strictly after ``after``;
        ``probe``: the owner's privacy settings, taken along by the mirror's read."""
        return await self._breaker.read(
            "list",
            lambda: self._mirrored_entries(side, user_id, after, wanted, probe),
            lambda: self._pages.page(side, user_id, after, wanted),
        )

    async def _mirrored_entries(
        self,
        side: Side,
        user_id: str,
        after: Position | None,
        wanted: int,
        probe: PrivacyProbe | None,
    ) -> list[Entry]:
        hot = await self._hot_page(user_id, side, after, wanted, probe)
        if hot is None and await self._sync.build_cold_list(user_id, side):
            hot = await self._hot_page(user_id, side, after, wanted, probe)
        if hot is None:  # unknown user, or the mirror would not take the snapshot
            note_graph_read("list")
            return await self._pages.page(side, user_id, after, wanted)
        entries = hot.entries
        if len(entries) < wanted and hot.truncated:
            # The hot list holds only the newest entries: continue in Neo4j at the seam.
            note_graph_read("deep page")
            seam = entries[-1].position if entries else after
            entries = entries + await self._pages.page(side, user_id, seam, wanted - len(entries))
        return entries

    async def _hot_page(
        self,
        user_id: str,
        side: Side,
        after: Position | None,
        wanted: int,
        probe: PrivacyProbe | None = None,
    ) -> HotPage | None:
        try:
            return await self._mirror.page(user_id, side, after, wanted, probe)
        except StatusesMissing:
            await self._sync.load_statuses()
            return await self._mirror.page(user_id, side, after, wanted, probe)


async def without_followed_back(
    edges: EdgeStore, side: Side, user_id: str, entries: list[Entry]
) -> list[Entry]:
    """Entries left once those the user follows back (followers) or that follow it back
    (following) are dropped: one relationships read of the page, a graph read."""
    note_graph_read("relationships")
    ids = [e.user_id for e in entries]
    back = {
        rel.user_id
        for rel in await edges.relationships(user_id, ids)
        if (rel.following if side is Side.FOLLOWERS else rel.followed_by)
    }
    return [e for e in entries if e.user_id not in back]
