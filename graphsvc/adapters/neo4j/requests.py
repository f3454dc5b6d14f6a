"""Pending follow requests in Neo4j (``cypher/requests.cypher``): pages of those made to a user
and by one, the count the owner is shown, and the marks and batches of an approval of every
request (the edge writes themselves are relations/follow, approve, reject and unfollow)."""

from __future__ import annotations

from graphsvc.adapters.neo4j.pages import keyset_page
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Entry


class RequestStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def page(
        self, name: str, user_id: str, after: Position | None, limit: int
    ) -> list[Entry]:
        """Keyset page, newest first, of ``requests/incoming_page`` or ``requests/sent_page``."""
        return await keyset_page(self._store, f"requests/{name}", user_id, after, limit)

    async def pending(self, user_id: str) -> int:
        (row,) = await self._store.read("requests/pending_count", {"id": user_id})
        return int(row["pending"])

    async def approve_all_begin(self, user_id: str) -> tuple[bool, int]:
        """Mark every request made to the user up to now for approval: (marked, pending)."""
        (row,) = await self._store.write("requests/approve_all_begin", {"id": user_id})
        return bool(row["marked"]), int(row["pending"])

    async def approvals_due(self, user_id: str, limit: int) -> list[tuple[int, str]]:
        """The next (since, requester) an approval of every request takes, oldest first."""
        params = {"id": user_id, "limit": limit}
        rows = await self._store.read("requests/approvals_due", params, fresh=True)
        return [(row["since"], row["id"]) for row in rows]

    async def approve_all_step(
        self, user_id: str, since: int | None, last: str | None, *, done: bool
    ) -> bool:
        """Note the position reached (None: keep it); with ``done``, end the work unless
        requests to approve remain. True when the work is over (the mark is gone)."""
        params = {"user": user_id, "since": since, "id": last, "done": done}
        rows = await self._store.write("requests/approve_all_step", params)
        return not rows or bool(rows[0]["finished"])

    async def approving_users(self) -> list[str]:
        rows = await self._store.read("requests/approving_users", {}, fresh=True)
        return [row["id"] for row in rows]
