"""Portable relations in Neo4j (``cypher/portable.cypher``): a user's follows, blocks, mutes
and lists as its exports write them, and which ids an import's rows name exist."""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.neo4j.relations import stored_options
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.portable import Entry, Kind


class PortableStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def entries(self, kind: Kind, user_id: str, limit: int) -> list[Entry]:
        """The user's entries of this kind, newest first, ``limit`` at most."""
        rows = await self._store.read(f"portable/{kind.value}", {"id": user_id, "limit": limit})
        match kind:
            case Kind.FOLLOWING:
                return [_follow(row) for row in rows]
            case Kind.MUTES:
                return [
                    Entry(row["id"], hide_notifications=bool(row["notifications"])) for row in rows
                ]
            case Kind.LISTS:
                return [
                    Entry(row["id"], list_name=row["name"], list_id=row["list"]) for row in rows
                ]
        return [Entry(row["id"]) for row in rows]

    async def known(self, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        (row,) = await self._store.read("portable/known", {"ids": list(ids)})
        return set(row["known"])


def _follow(row: dict) -> Entry:
    options = stored_options(row)
    return Entry(row["id"], options.reblogs, options.notify, options.languages)
