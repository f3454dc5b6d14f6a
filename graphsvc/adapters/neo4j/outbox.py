"""The event outbox in Neo4j: each change's ``:GraphEvent``, created in the change's own
transaction, taken by the relay once old enough, and deleted by event id once delivered."""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.model import GraphEvent


class OutboxStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def due(self, cutoff_us: int, limit: int) -> list[GraphEvent]:
        """The oldest outbox events written before ``cutoff_us``."""
        params = {"cutoff": cutoff_us, "limit": limit}
        rows = await self._store.read("outbox/outbox_due", params, fresh=True)
        return [
            GraphEvent(
                row["id"],
                row["type"],
                row["src"],
                row["dst"],
                row["version"],
                row["status"],
                row["cause"],
                row["list"],
                row["followers"],
                row["following"],
            )
            for row in rows
        ]

    async def delete(self, event_ids: Sequence[str]) -> int:
        (row,) = await self._store.write("outbox/outbox_delete", {"ids": list(event_ids)})
        return int(row["deleted"])

    async def backlog(self) -> int:
        (row,) = await self._store.read("outbox/outbox_backlog", {})
        return int(row["backlog"])
