"""The changes of users' lists, read from the follows and the tombstones of ended follows
(``cypher/history.cypher``), and the sweep that forgets the tombstones past their retention."""

from __future__ import annotations

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.changes import Change
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Side


class ChangeStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def page(
        self, side: Side, user_id: str, after: Position, until: int, limit: int
    ) -> list[Change]:
        """Up to ``limit`` changes of the user's list strictly after ``after`` and no later
        than ``until`` (microseconds), oldest first."""
        name = "history/follower_changes" if side is Side.FOLLOWERS else "history/following_changes"
        params = {
            "id": user_id,
            "at": after.since,
            "after": after.user_id,
            "until": until,
            "limit": limit,
        }
        rows = await self._store.read(name, params)
        return [Change(row["at"], row["id"], row["op"], row["cause"], row["by"]) for row in rows]

    async def series(
        self, side: Side, user_id: str, start: int, width: int
    ) -> tuple[int, dict[int, tuple[int, int]]]:
        """The list's length now, and its (gained, lost) per bucket of ``width`` with a change
        from ``start`` to now, by the bucket's start."""
        name = "history/follower_series" if side is Side.FOLLOWERS else "history/following_series"
        (row,) = await self._store.read(name, {"id": user_id, "from": start, "width": width})
        return int(row["total"]), {b[0]: (b[1], b[2]) for b in row["buckets"]}

    async def expire(self, before: int, batch: int) -> int:
        """Delete up to ``batch`` tombstones of follows ended before ``before``; how many."""
        rows = await self._store.write(
            "history/expire", {"before": before, "batch": batch}, job=True
        )
        return int(rows[0]["deleted"]) if rows else 0
