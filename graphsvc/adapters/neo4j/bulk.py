"""Loading many edges by transactions (batched UNWINDs that lock followers as live writes
do), and wiping a database (the evaluation's own server only). Long jobs' statements: each
has NEO4J_JOB_TIMEOUT_SECONDS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore


class BulkStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def load_users(self, user_ids: Sequence[str]) -> None:
        await self._store.write("bulk/load_users", {"ids": list(user_ids)}, job=True)

    async def load_edges(self, rows: Sequence[Mapping[str, Any]]) -> int:
        (row,) = await self._store.write("bulk/load_edges", {"rows": list(rows)}, job=True)
        return int(row["created"])

    async def load_follows(self, groups: Sequence[Mapping[str, Any]]) -> int:
        """Edges grouped by follower (see the query ``bulk/load_follows``); returns how
        many were new."""
        (row,) = await self._store.write("bulk/load_follows", {"groups": list(groups)}, job=True)
        return int(row["created"])

    async def wipe(self) -> None:
        """Delete everything (in batches, by the query itself)."""
        await self._store.write_auto_commit("bulk/wipe", {}, job=True)
