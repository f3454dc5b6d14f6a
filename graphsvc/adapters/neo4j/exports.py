"""The whole graph at a cut, read a batch of users at a time (``history/export_batch``): every
table's rows of the batch in one round trip, and never more than a batch held at once,
whatever the graph's size."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore

Rows = dict[str, list[list[Any]]]  # table -> rows
TABLES = ("users", "follows", "blocks", "mutes")


class ExportStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def batches(self, cut: int, users: int) -> AsyncIterator[Rows]:
        """Each batch's rows of every table (users, follows, blocks, mutes) as of ``cut``
        (µs), ``users`` users at a time, in id order (a long job's statements). The next
        batch is read while the caller handles this one (when the caller awaits meanwhile:
        writing in a thread), so Neo4j and the driver work while the caller writes."""
        ahead = asyncio.create_task(self._batch("", users, cut))
        try:
            while True:
                row = await ahead
                if row["last"] is None:
                    return
                ahead = asyncio.create_task(self._batch(row["last"], users, cut))
                yield {table: row[table] for table in TABLES}
        finally:
            ahead.cancel()

    async def _batch(self, after: str, users: int, cut: int) -> Any:
        params = {"after": after, "users": users, "cut": cut}
        (row,) = await self._store.read("history/export_batch", params, job=True)
        return row
