"""Account moves in Neo4j (``cypher/moves.cypher``): aliases, a move's mark and state, its
followers in pages, and its end with the severance notice."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.adapters.neo4j.relations import stored_options
from graphsvc.adapters.neo4j.store import Neo4jStore, event_id
from graphsvc.domain.follow_options import FollowOptions
from graphsvc.domain.model import GraphEvent
from graphsvc.domain.moves import MoveState


@dataclass(frozen=True, slots=True)
class MoveStart:
    refused: str | None
    started: bool
    retry_at: int | None


class MoveStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def alias(self, user_id: str, old: str, most: int) -> tuple[str | None, bool]:
        params = {"id": user_id, "old": old, "max": most}
        (row,) = await self._store.write("moves/alias", params)
        return row["refused"], bool(row["created"])

    async def unalias(self, user_id: str, old: str) -> bool:
        (row,) = await self._store.write("moves/unalias", {"id": user_id, "old": old})
        return bool(row["removed"])

    async def aliases(self, user_id: str) -> list[tuple[str, int]]:
        rows = await self._store.read("moves/aliases", {"id": user_id})
        return [(row["id"], int(row["since"])) for row in rows]

    async def begin(self, old: str, new: str, cooldown_us: int) -> MoveStart:
        params = {"old": old, "new": new, "ids": sorted((old, new)), "cooldown_us": cooldown_us}
        (row,) = await self._store.write("moves/begin", params)
        return MoveStart(row["refused"], bool(row["started"]), row["retry_at"])

    async def state(self, user_id: str) -> MoveState | None:
        rows = await self._store.read("moves/state", {"id": user_id})
        if not rows:
            return None
        row = rows[0]
        return MoveState(row["moved_to"], row["moved_at"], bool(row["moving"]), int(row["moved"]))

    async def moving(self, limit: int) -> list[str]:
        return [row["id"] for row in await self._store.read("moves/moving", {"limit": limit})]

    async def followers(
        self, user_id: str, after: str, limit: int
    ) -> list[tuple[str, FollowOptions]]:
        params = {"id": user_id, "after": after, "limit": limit}
        (row,) = await self._store.read("moves/followers_page", params)
        keys = ("notify", "reblogs", "langs")
        return [(f[0], stored_options(dict(zip(keys, f[1:], strict=True)))) for f in row["rows"]]

    async def finish(self, user_id: str) -> GraphEvent | None:
        """End the move's mark; its severance notice (how many followers it moved), created
        in the outbox, or None when it had ended already."""
        params = {"id": user_id, "event": event_id()}
        (row,) = await self._store.write("moves/finish", params)
        if not row["finished"]:
            return None
        return GraphEvent(
            params["event"],
            "severed",
            row["moved_to"],
            user_id,
            int(row["version"]),
            cause="move",
            followers=int(row["followers"]),
        )
