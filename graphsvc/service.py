"""Use cases of the relation service, and the order in which the stores are written.

Writes go to Neo4j first (the truth, with the change's event in its outbox, same
transaction) and then to the Redis mirror and the event stream, in one round trip. Reads come
from the mirror; a cold mirror is rebuilt from Neo4j for that user and then served, and pages
past a capped hot list continue in Neo4j from the same keyset position. With Redis
unreachable, writes still commit (the outbox relay repairs the mirror later) and reads are
answered from Neo4j.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager

from redis.exceptions import RedisError

from graphsvc.background import Background, Progress
from graphsvc.cursor import CursorCodec, Position
from graphsvc.degraded import MIRROR_DOWN, Breaker
from graphsvc.errors import (
    Blocked,
    FollowingLimit,
    FollowRateLimit,
    GraphError,
    InvalidCursor,
    InvalidLimit,
    InvalidParameter,
    InvalidStatus,
    SelfFollow,
    TooManyIds,
    UserErasing,
    UserSuspended,
)
from graphsvc.events import EventLog
from graphsvc.follower_feed import FollowerFeed
from graphsvc.graph import GraphStore
from graphsvc.ids import validate_user_id
from graphsvc.interaction_buffer import InteractionBuffer, SuggestionCache
from graphsvc.keyed_lock import KeyedLock
from graphsvc.mirror import HotPage, Mirror, StatusesMissing
from graphsvc.model import (
    BlockChange,
    Counts,
    EdgeChange,
    Entry,
    GraphEvent,
    IdPage,
    Page,
    Refusal,
    Relationship,
    Side,
    UserState,
    iso_utc,
)
from graphsvc.recommend import AFFINITY_REFERENCE_US, PeopleYouMayKnow
from graphsvc.settings import Settings
from graphsvc.single_flight import SingleFlight

log = logging.getLogger(__name__)

STATUSES = ("active", "suspended", "spam")
# Common followers join two follower lists when the bigger is at most this many times the
# smaller; beyond, testing each follower of the smaller side is cheaper.
JOIN_RATIO = 16
Fetch = Callable[[Position | None, int], Awaitable[list[Entry]]]


class GraphService:
    def __init__(self, graph: GraphStore, mirror: Mirror, settings: Settings) -> None:
        self.graph = graph
        self.mirror = mirror
        self.settings = settings
        self._cursors = CursorCodec(settings.cursor_secret)
        # One user's writes queue here rather than on the user's Neo4j lock, where many waiters
        # make Neo4j report (false) deadlocks and the driver backs off for seconds.
        self._writers = KeyedLock()
        self._statuses_loading = asyncio.Lock()
        self.background = Background()
        self._cold = SingleFlight(settings.rebuild_concurrency, settings.rebuild_wait_seconds)
        self.breaker = Breaker(settings.redis_retry_seconds)
        self.events = EventLog(mirror.client, settings)
        self.feed = FollowerFeed(self.events)
        self.pymk = PeopleYouMayKnow(
            graph,
            InteractionBuffer(mirror.client, settings),
            SuggestionCache(mirror.client, settings),
            settings,
            self.breaker,
        )

    # -- follows and blocks ---------------------------------------------------------------------

    async def follow(self, user_id: str, target_id: str) -> bool:
        """Make ``user_id`` follow ``target_id``; True when the edge is new."""
        self._check_pair(user_id, target_id)
        settings = self.settings
        async with self._writers.hold(user_id):
            result = await self.graph.follow(
                user_id,
                target_id,
                max_following=settings.max_following,
                per_window=settings.follows_per_day,
                window_us=settings.follow_window_seconds * 1_000_000,
            )
            if isinstance(result, Refusal):
                raise self._refusal(result, user_id, target_id)
            await self._after_commit([result], _events(result), user_id)
        return result.changed

    async def unfollow(self, user_id: str, target_id: str) -> bool:
        """Remove the follow; True when there was one to remove."""
        self._check_pair(user_id, target_id)
        async with self._writers.hold(user_id):
            change = await self.graph.unfollow(user_id, target_id)
            if change is None:
                return False
            await self._after_commit([change], _events(change), user_id)
        return change.changed

    async def block(self, user_id: str, target_id: str) -> BlockChange:
        """``user_id`` blocks ``target_id``: follows both ways go, and neither may follow."""
        self._check_pair(user_id, target_id, "block or unblock")
        async with self._writers.hold_all(user_id, target_id):
            change = await self.graph.block(user_id, target_id)
            await self._after_commit(change.removed, change.events, user_id, target_id)
        return change

    async def unblock(self, user_id: str, target_id: str) -> bool:
        self._check_pair(user_id, target_id, "block or unblock")
        async with self._writers.hold(user_id):
            event = await self.graph.unblock(user_id, target_id)
            if event is not None:
                await self._after_commit([], [event])
        return event is not None

    @staticmethod
    def _check_pair(user_id: str, target_id: str, verb: str = "follow or unfollow") -> None:
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        if user_id == target_id:
            raise SelfFollow(f"user {user_id!r} cannot {verb} itself")

    def _refusal(self, refusal: Refusal, user_id: str, target_id: str) -> GraphError:
        settings = self.settings
        match refusal.rule:
            case "blocked":
                return Blocked(f"a block between {user_id!r} and {target_id!r} forbids this follow")
            case "suspended":
                return UserSuspended(f"user {user_id!r} is suspended and cannot follow")
            case "target_suspended":
                return UserSuspended(f"user {target_id!r} is suspended and cannot be followed")
            case "erasing":
                return UserErasing(f"{user_id!r} or {target_id!r} is being erased")
            case "following_limit":
                return FollowingLimit(
                    f"user {user_id!r} already follows {settings.max_following} users, the "
                    "limit (MAX_FOLLOWING); it resets only by unfollowing someone"
                )
            case "rate_limit":
                retry_at = refusal.retry_at or 0
                wait = max(1, -(-(retry_at - time.time_ns() // 1_000) // 1_000_000))
                return FollowRateLimit(
                    f"user {user_id!r} made {settings.follows_per_day} new follows within "
                    f"{settings.follow_window_seconds} s (FOLLOWS_PER_DAY); the next follow is "
                    f"allowed at {iso_utc(retry_at)}",
                    headers={"Retry-After": str(wait)},
                )
        raise AssertionError(f"unknown refusal {refusal.rule!r}")

    async def _after_commit(
        self, changes: Sequence[EdgeChange], events: Sequence[GraphEvent], *users: str
    ) -> None:
        """The mirror write with the event appends, and the suggestion-cache invalidation, of
        a committed change, side by side (one Redis round trip of latency).

        The change is committed whatever happens here: if Redis cannot be reached (or this
        process dies now), the outbox relay appends the events and repairs the users later.
        No-op repeats are mirrored too: the scripts are idempotent, and a retried request then
        repairs a mirror write that an earlier attempt lost.
        """
        if self.breaker.open or not all(change.counts_read for change in changes):
            return  # the relay appends the events, and repairs the users from Neo4j

        async def mirror() -> None:
            await self.mirror.apply_many(
                changes, also=lambda pipe: self.events.append_to(pipe, events)
            )

        try:
            await asyncio.gather(mirror(), self.pymk.cache.invalidate(*users))
        except MIRROR_DOWN as exc:
            self.breaker.trip(exc)
        except RedisError:
            log.exception("mirror update failed; the outbox relay repairs it")
            with contextlib.suppress(RedisError):  # an ack that got through must not stay
                await self.events.unack([event.id for event in events])

    # -- counts and relationships ---------------------------------------------------------------

    async def counts(self, user_id: str) -> Counts:
        validate_user_id(user_id)

        async def mirrored() -> Counts:
            counts = await self.mirror.counts(user_id)
            if counts is not None:
                return counts
            return await self._cold.run(("counts", user_id), lambda: self._build_counts(user_id))

        async def from_neo4j() -> Counts:
            snapshot = (await self.graph.snapshots([user_id])).get(user_id)
            return snapshot.totals if snapshot is not None else Counts.zero()

        return await self.breaker.read("counts", mirrored, from_neo4j)

    async def _build_counts(self, user_id: str) -> Counts:
        snapshot = (await self.graph.snapshots([user_id])).get(user_id)
        if snapshot is None:
            return Counts.zero()
        await self.mirror.install([snapshot], sides=())
        return snapshot.totals

    def is_celebrity(self, counts: Counts) -> bool:
        return counts.followers >= self.settings.celebrity_followers

    async def relationships(self, user_id: str, others: Sequence[str]) -> list[Relationship]:
        """How ``user_id`` relates to each of ``others`` (in the order given, once each)."""
        validate_user_id(user_id)
        maximum = self.settings.relationships_max_ids
        if not 1 <= len(others) <= maximum:
            raise TooManyIds(f"ids must name 1 to {maximum} users, got {len(others)}")
        for other in others:
            validate_user_id(other, "ids item")
        return await self.graph.relationships(user_id, list(dict.fromkeys(others)))

    # -- lists ----------------------------------------------------------------------------------

    async def followers(
        self,
        user_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        not_followed_back: bool = False,
    ) -> Page:
        """Who follows the user, newest first; optionally only those it does not follow."""
        validate_user_id(user_id)
        scope = "followers-not-followed-back" if not_followed_back else "followers"

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._visible(Side.FOLLOWERS, user_id, after, wanted, not_followed_back)

        return await self._paged(f"{scope}|{user_id}", limit, cursor, fetch)

    async def following(
        self,
        user_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        not_following_back: bool = False,
        celebrities_only: bool = False,
    ) -> Page:
        """Whom the user follows, newest first; optionally only those not following back, or
        only celebrities (at least CELEBRITY_FOLLOWERS followers)."""
        validate_user_id(user_id)
        if not_following_back and celebrities_only:
            raise InvalidParameter("use either not_following_back or celebrities_only, not both")
        if celebrities_only:
            threshold = self.settings.celebrity_followers

            async def fetch(after: Position | None, wanted: int) -> list[Entry]:
                return await self.graph.page(
                    Side.FOLLOWING, user_id, after, wanted,
                    name="celebrities_page", threshold=threshold,
                )  # fmt: skip

            return await self._paged(f"celebrities|{user_id}", limit, cursor, fetch)
        scope = "following-not-following-back" if not_following_back else "following"

        async def visible(after: Position | None, wanted: int) -> list[Entry]:
            return await self._visible(Side.FOLLOWING, user_id, after, wanted, not_following_back)

        return await self._paged(f"{scope}|{user_id}", limit, cursor, visible)

    async def friends(
        self, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        """Active mutual follows, closest first: by affinity, then the newest follow."""
        validate_user_id(user_id)

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            if after is not None and after.score is None:  # a cursor from before the score
                raise InvalidCursor("cursor is from an older friends order; start again without it")
            return await self.graph.friends_page(
                user_id, after, wanted, ref=AFFINITY_REFERENCE_US,
                half_life_us=self.pymk.half_life_us,
            )  # fmt: skip

        return await self._paged(f"friends|{user_id}", limit, cursor, fetch)

    async def common_following(
        self, user_id: str, other_id: str, limit: int | None = None, cursor: str | None = None
    ) -> IdPage:
        """Active users both follow, in id order, with the exact total."""
        return await self._common("common_following", user_id, other_id, limit, cursor)

    async def common_followers(
        self, user_id: str, other_id: str, limit: int | None = None, cursor: str | None = None
    ) -> IdPage:
        """Active users who follow both, in id order, with the exact total.

        Two similar follower lists are joined (read once each); a much smaller one is walked
        and each of its followers tested for an edge to the other user, which never reads the
        bigger list. The counts come from the mirror (O(1))."""
        validate_user_id(user_id, "user_id")
        validate_user_id(other_id, "other_id")
        self._check_two(user_id, other_id)
        both = await asyncio.gather(self.counts(user_id), self.counts(other_id))
        sizes = sorted(counts.followers for counts in both)
        similar = sizes[1] <= JOIN_RATIO * max(sizes[0], 1)
        name = "common_followers_join" if similar else "common_followers"
        return await self._common(name, user_id, other_id, limit, cursor, scope="common_followers")

    async def familiar_followers(
        self, viewer_id: str, target_id: str, limit: int | None = None
    ) -> IdPage:
        """Active users the viewer follows who follow the target, newest follow first."""
        validate_user_id(viewer_id, "viewer_id")
        validate_user_id(target_id, "target_id")
        limit = self._check_limit(limit)
        total, ids = await self.graph.id_page(
            "familiar_followers", {"viewer": viewer_id, "target": target_id}, "", limit
        )
        return IdPage(total, ids)

    async def _common(
        self,
        name: str,
        user_id: str,
        other_id: str,
        limit: int | None,
        cursor: str | None,
        *,
        scope: str | None = None,
    ) -> IdPage:
        validate_user_id(user_id, "user_id")
        validate_user_id(other_id, "other_id")
        limit = self._check_limit(limit)
        self._check_two(user_id, other_id)
        scope = f"{scope or name}|{user_id}|{other_id}"
        after = self._cursors.decode(scope, cursor).user_id if cursor else ""
        total, ids = await self.graph.id_page(name, {"a": user_id, "b": other_id}, after, limit + 1)
        more = len(ids) > limit
        ids = ids[:limit]
        next_cursor = self._cursors.encode(scope, Position(0, ids[-1])) if more else None
        return IdPage(total, ids, next_cursor)

    @staticmethod
    def _check_two(user_id: str, other_id: str) -> None:
        if user_id == other_id:
            raise InvalidParameter(f"common lists need two different users, got {user_id!r} twice")

    async def _paged(self, scope: str, limit: int | None, cursor: str | None, fetch: Fetch) -> Page:
        limit = self._check_limit(limit)
        after = self._cursors.decode(scope, cursor) if cursor else None
        entries = await fetch(after, limit + 1)  # one extra tells whether another page exists
        items = entries[:limit]
        more = len(entries) > limit
        return Page(items, self._cursors.encode(scope, items[-1].position) if more else None)

    async def _visible(
        self, side: Side, user_id: str, after: Position | None, wanted: int, not_back: bool
    ) -> list[Entry]:
        """Up to ``wanted`` entries of a list without inactive users (and, with ``not_back``,
        without those the user also follows / is followed by), scanning on as needed."""
        kept: list[Entry] = []
        position, chunk = after, wanted
        while len(kept) < wanted:
            entries = await self._entries(side, user_id, position, chunk)
            if entries:
                kept += await self._keep(side, user_id, entries, not_back)
            if len(entries) < chunk:
                break
            position = entries[-1].position
            chunk = min(chunk * 4, 2_000)
        return kept[:wanted]

    async def _keep(
        self, side: Side, user_id: str, entries: list[Entry], not_back: bool
    ) -> list[Entry]:
        """Entries (already without inactive users) left once those the user follows back
        (followers) or that follow it back (following) are dropped, if asked."""
        if not not_back:
            return entries
        ids = [e.user_id for e in entries]
        back = {
            rel.user_id
            for rel in await self.graph.relationships(user_id, ids)
            if (rel.following if side is Side.FOLLOWERS else rel.followed_by)
        }
        return [e for e in entries if e.user_id not in back]

    async def load_statuses(self) -> int:
        """Build the mirror's set of inactive users from Neo4j (when it is missing)."""
        async with self._statuses_loading:
            if await self.mirror.inactive_among([]) is not None:
                return 0
            loaded = 0
            async for batch in self.graph.inactive_users():
                await self.mirror.load_statuses(batch)
                loaded += len(batch)
            await self.mirror.mark_statuses_built()
            return loaded

    async def _entries(
        self, side: Side, user_id: str, after: Position | None, wanted: int
    ) -> list[Entry]:
        """Up to ``wanted`` entries without inactive users: from the hot list, continued in
        Neo4j past a truncated one (Neo4j filters on the same statuses)."""
        return await self.breaker.read(
            "list",
            lambda: self._mirrored_entries(side, user_id, after, wanted),
            lambda: self.graph.page(side, user_id, after, wanted),
        )

    async def _mirrored_entries(
        self, side: Side, user_id: str, after: Position | None, wanted: int
    ) -> list[Entry]:
        hot = await self._hot_page(user_id, side, after, wanted)
        if hot is None and await self._cold.run(
            ("list", user_id, side), lambda: self.rebuild([user_id], [side])
        ):
            hot = await self._hot_page(user_id, side, after, wanted)
        if hot is None:  # unknown user, or the mirror would not take the snapshot
            return await self.graph.page(side, user_id, after, wanted)
        entries = hot.entries
        if len(entries) < wanted and hot.truncated:
            # The hot list holds only the newest entries: continue in Neo4j at the seam.
            seam = entries[-1].position if entries else after
            entries = entries + await self.graph.page(side, user_id, seam, wanted - len(entries))
        return entries

    async def _hot_page(
        self, user_id: str, side: Side, after: Position | None, wanted: int
    ) -> HotPage | None:
        try:
            return await self.mirror.page(user_id, side, after, wanted)
        except StatusesMissing:
            await self.load_statuses()
            return await self.mirror.page(user_id, side, after, wanted)

    def _check_limit(self, limit: int | None) -> int:
        maximum = self.settings.page_limit_max
        if limit is None:
            return min(self.settings.page_limit_default, maximum)
        if not 1 <= limit <= maximum:
            raise InvalidLimit(f"limit must be between 1 and {maximum}, got {limit}")
        return limit

    # -- moderation -----------------------------------------------------------------------------

    async def set_status(self, user_id: str, status: str) -> UserState:
        """Set a user's status; counts that depend on it are fanned out in the background."""
        validate_user_id(user_id)
        if status not in STATUSES:
            raise InvalidStatus(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
        async with self._writers.hold(user_id):
            version, fanout, event = await self.graph.set_status(user_id, status)
            try:
                if not self.breaker.open:
                    await self.mirror.set_status(user_id, status != "active", version)
                    await self._after_commit([], [event] if event else [], user_id)
            except MIRROR_DOWN as exc:  # the event stays un-acked: the relay repairs the user
                self.breaker.trip(exc)
            except RedisError:  # refused (OOM, READONLY): the same
                log.exception("status mirror write failed; the outbox relay repairs it")
        if fanout:
            self.start_fanout(user_id)
        return UserState(status, fanout, False)

    async def user_state(self, user_id: str) -> UserState | None:
        validate_user_id(user_id)
        return await self.graph.user_state(user_id)

    async def erase(self, user_id: str) -> bool:
        """Start erasing a user and all its edges; False when there is no such user."""
        validate_user_id(user_id)
        async with self._writers.hold(user_id):
            found, event = await self.graph.erase_begin(user_id)
            await self._after_commit([], [event] if event else [], user_id)
        if found:
            self.start_erasure(user_id)
        return found

    def start_fanout(self, user_id: str) -> None:
        from graphsvc.moderation import fan_out_status

        self.background.start(f"fanout:{user_id}", lambda p: fan_out_status(self, user_id, p))

    def start_erasure(self, user_id: str) -> None:
        from graphsvc.moderation import erase_user

        self.background.start(f"erase:{user_id}", lambda p: erase_user(self, user_id, p))

    def progress(self, user_id: str) -> Progress | None:
        return self.background.progress(f"erase:{user_id}") or self.background.progress(
            f"fanout:{user_id}"
        )

    async def resume_pending(self) -> int:
        """Restart fan-outs and erasures that a stopped process left unfinished."""
        pending = await self.graph.pending_work()
        for user_id, erasing in pending:
            if erasing:
                self.start_erasure(user_id)
            else:
                self.start_fanout(user_id)
        return len(pending)

    def writer(self, user_id: str) -> AbstractAsyncContextManager[None]:
        """The in-process write lock of one user (background jobs take it per batch)."""
        return self._writers.hold(user_id)

    # -- maintenance ----------------------------------------------------------------------------

    async def rebuild(self, user_ids: Sequence[str], sides: Sequence[Side] = tuple(Side)) -> int:
        """(Re)build the mirror of the given users from Neo4j; returns how many exist.

        A loaded list is kept (it is already receiving every change); use ``Mirror.drop``
        first to force a fresh build.
        """
        limit = self.settings.hot_list_cap + 1
        snapshots = await self.graph.snapshots(
            user_ids,
            followers_limit=limit if Side.FOLLOWERS in sides else 0,
            following_limit=limit if Side.FOLLOWING in sides else 0,
        )
        if snapshots:
            await self.mirror.install(snapshots.values(), sides)
        return len(snapshots)


def _events(change: EdgeChange) -> list[GraphEvent]:
    return [change.event] if change.event is not None else []
