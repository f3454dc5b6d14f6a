"""Mutes in Neo4j (``cypher/mutes.cypher``): the writes, each under the muter's lock with its
private outbox event, the muter's list, the snapshots the mirror is built from, and the
removal of an erased user's mutes by others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphsvc.adapters.neo4j.store import Neo4jStore, event_id
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import GraphEvent
from graphsvc.domain.mutes import Mute, MuteChange, encode_mute


@dataclass(frozen=True, slots=True)
class MuteSnapshot:
    """A user's mutes in effect, as the mirror keeps them (target -> encoded entry), and the
    user's clock when they were read: the snapshot's version."""

    user_id: str
    version: int
    entries: dict[str, str]


class MuteStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def mute(
        self, src: str, dst: str, *, seconds: int | None, notifications: bool, most: int
    ) -> MuteChange | str:
        """The committed change, or the rule that refused it ('erasing', 'mute_limit')."""
        event = event_id()
        params = {
            "src": src,
            "dst": dst,
            "seconds": seconds,
            "notif": notifications,
            "max": most,
            "event": event,
        }
        (row,) = await self._store.write("mutes/mute", params)
        if row["refused"] is not None:
            return str(row["refused"])
        version, changed = int(row["version"]), bool(row["changed"])
        return MuteChange(
            src,
            dst,
            version,
            True,
            until=row["until"],
            notifications=notifications,
            changed=changed,
            created=bool(row["created"]),
            event=GraphEvent(event, "mute", src, dst, version) if changed else None,
        )

    async def unmute(self, src: str, dst: str) -> MuteChange | None:
        """The committed removal (``changed``: there was a mute in effect); None when the
        muter never existed (nothing to mirror)."""
        event = event_id()
        params = {"src": src, "dst": dst, "event": event}
        (row,) = await self._store.write("mutes/unmute", params)
        if not row["known"]:
            return None
        version, removed = int(row["version"]), bool(row["removed"])
        graph_event = GraphEvent(event, "unmute", src, dst, version) if removed else None
        return MuteChange(src, dst, version, False, changed=removed, event=graph_event)

    async def page(self, user_id: str, now: int, after: Position | None, limit: int) -> list[Mute]:
        params = {
            "id": user_id,
            "now": now,
            "since": after.since if after else None,
            "after": after.user_id if after else None,
            "limit": limit,
        }
        rows = await self._store.read("mutes/mutes_page", params)
        return [Mute(r["id"], r["since"], r["until"], bool(r["notif"])) for r in rows]

    async def snapshots(self, user_ids: Sequence[str], now: int) -> list[MuteSnapshot]:
        """Read where writes go (``fresh``): the snapshot must include every acknowledged
        mute write, or a build would install a mirror that forgot it."""
        params = {"ids": list(user_ids), "now": now}
        rows = await self._store.read("mutes/mute_snapshots", params, fresh=True)
        return [
            MuteSnapshot(
                row["id"],
                int(row["version"]),
                {dst: encode_mute(v, until, notif) for dst, v, until, notif in row["mutes"]},
            )
            for row in rows
        ]

    async def erase_muted_by(self, user_id: str, batch: int) -> list[MuteChange]:
        """Remove a batch of the mutes of ``user_id`` (being erased) by others, as committed
        removals with their events."""
        events = [event_id() for _ in range(batch)]
        params = {"id": user_id, "batch": batch, "events": events}
        (row,) = await self._store.write("mutes/erase_muted_by", params)
        return [
            MuteChange(
                muter,
                user_id,
                int(version),
                False,
                changed=True,
                event=GraphEvent(events[i], "unmute", muter, user_id, int(version)),
            )
            for i, (muter, version) in enumerate(row["removed"])
        ]
