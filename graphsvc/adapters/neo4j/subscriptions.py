"""Subscriptions to moderation lists in Neo4j (``cypher/subscriptions.cypher``): a user's
subscriptions, their exceptions, and the steps of their work (what to lift and apply, what was
done), each under the lock of what it changes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphsvc.adapters.neo4j.pages import keyset_position
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.cursor import Position
from graphsvc.domain.subscriptions import Action, Subscription, SyncPlan, subscription_key


def _subscription(row: Mapping[str, Any]) -> Subscription:
    state = "lapsed" if not row["visible"] else "applying" if row["syncing"] else "applied"
    return Subscription(
        list_id=row["list"],
        action=Action(row["action"]),
        since=int(row["since"]),
        state=state,
        owner=row["owner"],
        name=row["name"],
        applied=int(row["applied"]),
        refused=int(row["refused"]),
        exceptions=int(row["exceptions"]),
    )


class SubscriptionStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def subscribe(
        self, user_id: str, list_id: str, action: Action, most: int
    ) -> tuple[str | None, bool]:
        """(the rule that refused it or None, whether it is new)."""
        params = {
            "user": user_id,
            "list": list_id,
            "key": subscription_key(user_id, list_id),
            "action": action.value,
            "max": most,
        }
        (row,) = await self._store.write("subscriptions/subscribe", params)
        return row["refused"], bool(row["created"])

    async def unsubscribe(self, user_id: str, list_id: str) -> bool:
        params = {"user": user_id, "key": subscription_key(user_id, list_id)}
        (row,) = await self._store.write("subscriptions/unsubscribe", params)
        return bool(row["removed"])

    async def page(
        self, user_id: str, after: Position | None, limit: int, list_id: str | None = None
    ) -> list[Subscription]:
        params = {
            "id": user_id,
            "key": subscription_key(user_id, list_id) if list_id else "",
            "limit": limit,
            **keyset_position(after),
        }
        return [_subscription(r) for r in await self._store.read("subscriptions/page", params)]

    async def except_member(
        self, user_id: str, list_id: str, target: str, excepted: bool
    ) -> tuple[str | None, bool] | None:
        """(the rule that refused it or None, whether it changed); None: no such
        subscription."""
        params = {
            "user": user_id,
            "key": subscription_key(user_id, list_id),
            "target": target,
            "excepted": excepted,
        }
        rows = await self._store.write("subscriptions/except", params)
        return (rows[0]["refused"], bool(rows[0]["changed"])) if rows else None

    async def exceptions(
        self, user_id: str, list_id: str, after: str | None, limit: int
    ) -> list[str]:
        params = {
            "user": user_id,
            "key": subscription_key(user_id, list_id),
            "after": after or "",
            "limit": limit,
        }
        return [r["id"] for r in await self._store.read("subscriptions/exceptions", params)]

    # -- the work -----------------------------------------------------------------------------

    async def due_users(self, limit: int) -> list[str]:
        rows = await self._store.read("subscriptions/due_users", {"limit": limit})
        return [row["user"] for row in rows]

    async def syncing(self, user_id: str) -> list[str]:
        """The list ids of the user's subscriptions whose work is due."""
        rows = await self._store.read("subscriptions/syncing", {"user": user_id})
        return [row["key"].partition("|")[2] for row in rows]

    async def plan(self, user_id: str, list_id: str, batch: int, now: int) -> SyncPlan | None:
        params = {
            "user": user_id,
            "key": subscription_key(user_id, list_id),
            "batch": batch,
            "now": now,
        }
        rows = await self._store.write("subscriptions/plan", params)
        if not rows:
            return None
        row = rows[0]
        return SyncPlan(
            version=int(row["version"]),
            action=Action(row["action"]),
            gone=bool(row["gone"]),
            lift=[(m, Action(a), bool(undo)) for m, a, undo in row["lift"]],
            apply=list(row["apply"]),
        )

    async def applied(
        self, user_id: str, list_id: str, done: Sequence[str], refused: Sequence[str]
    ) -> None:
        params = {
            "user": user_id,
            "key": subscription_key(user_id, list_id),
            "done": list(done),
            "refused": list(refused),
        }
        await self._store.write("subscriptions/applied", params)

    async def release(
        self, user_id: str, list_id: str, lifted: Sequence[tuple[str, Action]]
    ) -> None:
        params = {
            "user": user_id,
            "key": subscription_key(user_id, list_id),
            "lifted": [[m, a.value] for m, a in lifted],
        }
        await self._store.write("subscriptions/release", params)

    async def finish(self, user_id: str, list_id: str, version: int) -> bool:
        params = {"user": user_id, "key": subscription_key(user_id, list_id), "version": version}
        (row,) = await self._store.write("subscriptions/finish", params)
        return bool(row["finished"])

    async def claim(self, user_id: str, target: str, action: Action, kept: bool) -> int:
        params = {"user": user_id, "target": target, "action": action.value, "kept": kept}
        (row,) = await self._store.write("subscriptions/claim", params)
        return int(row["claimed"])

    async def erase_subscribed(self, user_id: str, batch: int) -> int:
        params = {"id": user_id, "batch": batch}
        (row,) = await self._store.write("subscriptions/erase_subscribed", params)
        return int(row["deleted"])
