"""Bells in Neo4j (``cypher/bells.cypher``): the users who ring an author's bell, in pages, and
the blocks a notification's delivery checks."""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.neo4j.store import Neo4jStore


class BellStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def ringers(self, author: str, after: str, limit: int) -> list[tuple[str, bool]]:
        """(ringer, inactive) pairs in id order after ``after`` ('' first)."""
        params = {"author": author, "after": after, "limit": limit}
        (row,) = await self._store.read("bells/ringers_page", params)
        inactive = set(row["inactive"])
        return [(ringer, ringer in inactive) for ringer in row["ids"]]

    async def count(self, author: str) -> int:
        (row,) = await self._store.read("bells/count", {"author": author})
        return int(row["ringers"])

    async def blocked_among(self, reader: str, authors: Sequence[str]) -> set[str]:
        if not authors:
            return set()
        params = {"reader": reader, "authors": list(authors)}
        (row,) = await self._store.read("bells/blocked_among", params)
        return set(row["blocked"])
