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
        params = {"id": user_id, "limit": limit}
        (row,) = await self._store.read(f"portable/{kind.value}", params)
        match kind:
            case Kind.FOLLOWING:
                return [_follow(*cells) for cells in row["rows"]]
            case Kind.MUTES:
                return [Entry(cells[0], hide_notifications=bool(cells[1])) for cells in row["rows"]]
            case Kind.LISTS:
                return [Entry(c[0], list_name=c[1], list_id=c[2]) for c in row["rows"]]
        return [Entry(cells[0]) for cells in row["rows"]]

    async def known(self, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        (row,) = await self._store.read("portable/known", {"ids": list(ids)})
        return set(row["known"])


def _follow(account: str, notify: bool | None, reblogs: bool | None, langs: list | None) -> Entry:
    options = stored_options({"notify": notify, "reblogs": reblogs, "langs": langs})
    return Entry(account, options.reblogs, options.notify, options.languages)
