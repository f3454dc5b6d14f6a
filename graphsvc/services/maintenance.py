"""What operators do to the stores beside the service's own use cases: put the schema in,
load and import graphs, empty the mirror or drop users from it, export, read the suggestion
ranker's registry, and wipe an evaluation's own servers.

The CLI's commands and the operations tooling reach the stores through this one interface,
never through the adapters the services hold, so everything an operator can do to the data
beneath the service is listed here, and the services' wiring can change without them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from graphsvc.adapters.neo4j.bulk import BulkStore
from graphsvc.adapters.neo4j.exports import ExportStore
from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.neo4j.ranker_models import RankerModelStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.leases import Leases
from graphsvc.adapters.redis.mirror_builds import MirrorBuilds
from graphsvc.domain.model import Counts


class Maintenance:
    def __init__(
        self,
        store: Neo4jStore,
        bulk: BulkStore,
        snapshots: SnapshotStore,
        moderation: ModerationStore,
        suggestions: SuggestionStore,
        mirror_builds: MirrorBuilds,
        redis: Client,
        *,
        exports: ExportStore,
        ranker_models: RankerModelStore,
        leases: Leases,
    ) -> None:
        self._store = store
        self._bulk = bulk
        self._snapshots = snapshots
        self._moderation = moderation
        self._suggestions = suggestions
        self._mirror_builds = mirror_builds
        self._redis = redis
        self.exports = exports  # the snapshot's batches (``ops/data/export.py``)
        self.ranker_models = ranker_models  # the registry an operator moves models in
        self.leases = leases  # a load's lease, so no two loads run at once

    # -- the schema ---------------------------------------------------------------------------

    async def apply_schema(self) -> None:
        await self._store.apply_schema()

    async def await_indexes(self) -> None:
        await self._store.await_indexes()

    # -- the graph -----------------------------------------------------------------------------

    async def user_count(self) -> int:
        return await self._snapshots.user_count()

    def user_ids(self, batch: int) -> AsyncIterator[list[str]]:
        return self._snapshots.user_ids(batch)

    async def clock(self) -> int:
        """Neo4j's time now: a floor for what the mirror may take from snapshots."""
        return await self._snapshots.clock()

    async def load_users(self, user_ids: Sequence[str]) -> None:
        await self._bulk.load_users(user_ids)

    async def load_follows(self, groups: Sequence[Mapping[str, Any]]) -> int:
        return await self._bulk.load_follows(groups)

    async def edge_count(self) -> int:
        return await self._suggestions.edge_count()

    async def pending_moderation(self) -> list[tuple[str, bool]]:
        """Users with unfinished status propagations or erasures: (id, erasing)."""
        return await self._moderation.pending_work()

    # -- the mirror ----------------------------------------------------------------------------

    async def clear_mirror(self) -> int:
        return await self._mirror_builds.clear()

    async def drop_from_mirror(self, user_ids: Iterable[str], *, floor: int = 0) -> list[str]:
        return await self._mirror_builds.drop(user_ids, floor=floor)

    async def install_loaded(
        self, users: Iterable[tuple[str, int, Counts, Sequence[Any], Sequence[Any]]]
    ) -> None:
        await self._mirror_builds.install_loaded(users)

    # -- everything ----------------------------------------------------------------------------

    async def wipe(self) -> None:
        """Empty Neo4j and Redis and put the schema back: only ever for an evaluation's own
        servers."""
        await self._bulk.wipe()
        await self._redis.flushdb()  # a cluster client sends it to every primary
        await self._store.apply_schema()
