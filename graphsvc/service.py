"""Use cases of the relation service, and the order in which the stores are written.

Writes go to Neo4j first (the truth) and then to the Redis mirror. Reads come from the
mirror; a cold mirror is rebuilt from Neo4j for that user and then served, and pages past a
capped hot list continue in Neo4j from the same keyset position.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from redis.exceptions import RedisError

from graphsvc.cursor import CursorCodec, Position
from graphsvc.errors import InvalidLimit, SelfFollow
from graphsvc.graph import GraphStore
from graphsvc.ids import validate_user_id
from graphsvc.keyed_lock import KeyedLock
from graphsvc.mirror import Mirror
from graphsvc.model import Counts, EdgeChange, Entry, Page, Side
from graphsvc.settings import Settings

log = logging.getLogger(__name__)


class GraphService:
    def __init__(self, graph: GraphStore, mirror: Mirror, settings: Settings) -> None:
        self.graph = graph
        self.mirror = mirror
        self.settings = settings
        self._cursors = CursorCodec(settings.cursor_secret)
        # One user's writes queue here rather than on the user's Neo4j lock, where many waiters
        # make Neo4j report (false) deadlocks and the driver backs off for seconds.
        self._writers = KeyedLock()

    # -- writes -------------------------------------------------------------------------------

    async def follow(self, user_id: str, target_id: str) -> bool:
        """Make ``user_id`` follow ``target_id``; True when the edge is new."""
        self._check_pair(user_id, target_id)
        async with self._writers.hold(user_id):
            change = await self.graph.follow(user_id, target_id)
            await self._mirror(change)
        return change.changed

    async def unfollow(self, user_id: str, target_id: str) -> bool:
        """Remove the follow; True when there was one to remove."""
        self._check_pair(user_id, target_id)
        async with self._writers.hold(user_id):
            change = await self.graph.unfollow(user_id, target_id)
            if change is None:
                return False
            await self._mirror(change)
        return change.changed

    @staticmethod
    def _check_pair(user_id: str, target_id: str) -> None:
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        if user_id == target_id:
            raise SelfFollow(f"user {user_id!r} cannot follow or unfollow itself")

    async def _mirror(self, change: EdgeChange) -> None:
        # Also mirrors no-op repeats: the scripts are idempotent, and a retried request then
        # repairs a mirror write that an earlier attempt lost.
        try:
            await self.mirror.apply(change)
        except RedisError:
            # The edge is committed in Neo4j; the mirror catches up on rebuild or reconcile.
            log.exception("mirror update failed for %s -> %s", change.src, change.dst)

    # -- reads --------------------------------------------------------------------------------

    async def counts(self, user_id: str) -> Counts:
        validate_user_id(user_id)
        counts = await self.mirror.counts(user_id)
        if counts is not None:
            return counts
        snapshots = await self.graph.snapshots([user_id])
        snapshot = snapshots.get(user_id)
        if snapshot is None:
            return Counts(0, 0)
        await self.mirror.install([snapshot], sides=())
        return Counts(snapshot.followers_count, snapshot.following_count)

    async def followers(
        self, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        return await self._list(Side.FOLLOWERS, user_id, limit, cursor)

    async def following(
        self, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        return await self._list(Side.FOLLOWING, user_id, limit, cursor)

    async def _list(self, side: Side, user_id: str, limit: int | None, cursor: str | None) -> Page:
        validate_user_id(user_id)
        limit = self._check_limit(limit)
        scope = f"{side.label}|{user_id}"
        after = self._cursors.decode(scope, cursor) if cursor else None
        wanted = limit + 1  # one extra tells whether another page exists
        entries = await self._entries(side, user_id, after, wanted)
        items = entries[:limit]
        more = len(entries) > limit
        return Page(items, self._cursors.encode(scope, items[-1].position) if more else None)

    async def _entries(
        self, side: Side, user_id: str, after: Position | None, wanted: int
    ) -> list[Entry]:
        hot = await self.mirror.page(user_id, side, after, wanted)
        if hot is None and await self.rebuild([user_id], [side]):
            hot = await self.mirror.page(user_id, side, after, wanted)
        if hot is None:  # unknown user, or the mirror would not take the snapshot
            return await self.graph.page(side, user_id, after, wanted)
        entries = hot.entries
        if len(entries) < wanted and hot.truncated:
            # The hot list holds only the newest entries: continue in Neo4j at the seam.
            seam = entries[-1].position if entries else after
            entries = entries + await self.graph.page(side, user_id, seam, wanted - len(entries))
        return entries

    def _check_limit(self, limit: int | None) -> int:
        maximum = self.settings.page_limit_max
        if limit is None:
            return min(self.settings.page_limit_default, maximum)
        if not 1 <= limit <= maximum:
            raise InvalidLimit(f"limit must be between 1 and {maximum}, got {limit}")
        return limit

    # -- maintenance --------------------------------------------------------------------------

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
