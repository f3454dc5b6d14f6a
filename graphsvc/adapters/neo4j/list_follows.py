"""List follows in Neo4j (``cypher/list_follows.cypher``): a user's follows of curate lists."""

from __future__ import annotations

from graphsvc.adapters.neo4j.lists import list_from_row
from graphsvc.adapters.neo4j.pages import keyset_position
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.cursor import Position
from graphsvc.domain.lists import FollowedList


class ListFollowStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def follow(self, user_id: str, list_id: str, most: int) -> tuple[str | None, bool]:
        """(the rule that refused it or None, whether the follow is new)."""
        params = {"user": user_id, "list": list_id, "max": most}
        (row,) = await self._store.write("list_follows/follow", params)
        return row["refused"], bool(row["created"])

    async def unfollow(self, user_id: str, list_id: str) -> bool:
        (row,) = await self._store.write(
            "list_follows/unfollow", {"user": user_id, "list": list_id}
        )
        return bool(row["removed"])

    async def page(self, user_id: str, after: Position | None, limit: int) -> list[FollowedList]:
        params = {"id": user_id, "limit": limit, **keyset_position(after)}
        rows = await self._store.read("list_follows/page", params)
        return [FollowedList(list_from_row(row), int(row["followed"])) for row in rows]
