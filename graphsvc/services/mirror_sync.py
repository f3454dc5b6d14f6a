"""Keeping the mirror in step with Neo4j: builds of cold users on read, rebuilds, repairs, and
the set of inactive users.

A cold user (never mirrored, flushed, a list key lost) is built from one Neo4j snapshot and
then served: never an empty list because the cache is cold. Concurrent reads of one cold user
share one build, and at most REBUILD_CONCURRENCY builds run against Neo4j at once
(``single_flight``). A repair drops users and rebuilds them; the drop leaves a floor, so a
slower build that read Neo4j before the drop cannot install its older snapshot afterwards.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.redis.mirror_builds import MirrorBuilds
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.concurrency.single_flight import SingleFlight
from graphsvc.domain.errors import Overloaded
from graphsvc.domain.model import Counts, Side
from graphsvc.services.telemetry import COLD_REBUILDS
from graphsvc.settings import MirrorSettings


class MirrorSync:
    def __init__(
        self,
        snapshots: SnapshotStore,
        moderation: ModerationStore,
        mirror: MirrorBuilds,
        statuses: StatusSet,
        settings: MirrorSettings,
    ) -> None:
        self._snapshots = snapshots
        self._moderation = moderation
        self._mirror = mirror
        self._statuses = statuses
        self._settings = settings
        self._cold = SingleFlight(settings.rebuild_concurrency, settings.rebuild_wait_seconds)
        self._statuses_loading = asyncio.Lock()

    async def rebuild(self, user_ids: Sequence[str], sides: Sequence[Side] = tuple(Side)) -> int:
        """(Re)build the mirror of the given users from Neo4j; returns how many exist.

        A loaded list is kept (it is already receiving every change); ``MirrorBuilds.drop`` first
        forces a fresh build (as ``repair`` does).
        """
        snapshots = await self._snapshots.snapshots(user_ids, **self._whole(sides), lock=True)
        if snapshots:
            await self._mirror.install(snapshots.values(), sides)
        return len(snapshots)

    def _whole(self, sides: Sequence[Side] = tuple(Side)) -> dict[str, int]:
        """The snapshot's list limits: a hot list's cap and one more (it says truncated)."""
        limit = self._settings.hot_list_cap + 1
        return {
            "followers_limit": limit if Side.FOLLOWERS in sides else 0,
            "following_limit": limit if Side.FOLLOWING in sides else 0,
        }

    async def build_cold_list(self, user_id: str, side: Side) -> int:
        """Build one cold list on read: once for all concurrent readers, within the limit of
        concurrent builds (503 ``overloaded`` past REBUILD_WAIT_SECONDS)."""

        async def build() -> int:
            COLD_REBUILDS.inc()
            return await self.rebuild([user_id], [side])

        return await self._cold.run(("list", user_id, side), build)

    async def build_cold_counts(self, user_id: str) -> Counts:
        """A cold user's counts, from Neo4j, installed for the next read (zeros for an
        unknown user, which gets no mirror keys)."""
        return await self._cold.run(("counts", user_id), lambda: self._build_counts(user_id))

    async def _build_counts(self, user_id: str) -> Counts:
        COLD_REBUILDS.inc()
        snapshot = (await self._snapshots.snapshots([user_id], lock=True)).get(user_id)
        if snapshot is None:
            return Counts.zero()
        await self._mirror.install([snapshot], sides=())
        return snapshot.totals

    async def load_statuses(self) -> int:
        """Build the mirror's set of inactive users from Neo4j (when it is missing)."""
        async with self._statuses_loading:
            if await self._statuses.inactive_among([]) is not None:
                return 0
            loaded = 0
            async for batch in self._snapshots.inactive_users():
                await self._statuses.load(batch)
                loaded += len(batch)
            await self._statuses.mark_built()
            return loaded

    async def inactive_among(self, user_ids: Sequence[str]) -> set[str]:
        """Which of these users are suspended or spam, as lists leave them out (the set built
        from Neo4j first when it is missing; a 503 when it went again meanwhile, since nothing
        unchecked may be told)."""
        inactive = await self._statuses.inactive_among(user_ids)
        if inactive is None:
            await self.load_statuses()
            inactive = await self._statuses.inactive_among(user_ids)
        if inactive is None:
            raise Overloaded(
                "the users' statuses are being rebuilt in Redis; retry shortly",
                {"Retry-After": "1"},
            )
        return inactive

    async def repair(self, user_ids: Sequence[str], *, force: bool = True) -> None:
        """Rebuild users from Neo4j. ``force``: Neo4j's status overrides whatever version the
        mirror holds (it may be the drift: reconcile); else the newer version wins, as for any
        status write (the relay, which repairs lost writes while statuses may change)."""
        # Read before the drop: a Neo4j that cannot answer leaves the mirror as it was,
        # serving reads (the relay tries again). A write mirrored since the read raises the
        # drop's floor past it and the install refuses the snapshot: those users are read
        # again, after the drop.
        snapshots = await self._snapshots.snapshots(user_ids, **self._whole(), lock=True)
        await self._mirror.drop(user_ids)
        refused = await self._mirror.install(snapshots.values(), tuple(Side)) if snapshots else ()
        if refused:
            await self.rebuild(sorted(refused))
        write_status = self._statuses.force_status if force else self._statuses.set_status
        for user_id in user_ids:
            state = await self._moderation.propagation_state(user_id)
            if state is None:  # not in Neo4j: nothing of it may stay hidden
                await write_status(user_id, False, time.time_ns() // 1_000)
            else:
                status, version, _ = state
                await write_status(user_id, status != "active", version or 0)
