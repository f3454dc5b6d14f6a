"""Statuses, status propagations and erasures in Neo4j: each batch one short transaction that
locks the user, and records its own mirror work on the user's node (replayed on resume).

A status propagation (the counts of a user's follows and followers following its status) is
stored under the name fan-out: the user's mark is the label :Fanout, its queries are
``moderation/fanout_*``, and their rows say ``fanout``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from graphsvc.adapters.neo4j.store import Neo4jStore, event_id
from graphsvc.domain.model import GraphEvent, Side, UserState


@dataclass(frozen=True, slots=True)
class ErasureEnd:
    """What ``erase_end`` found: whether the user is gone, the version to forget its status by
    (None when there was no node to delete), how long the node must still be kept for its
    revoked keys, and the keys it revoked."""

    done: bool
    version: int | None
    wait_seconds: float = 0.0
    revoked: list[str] = field(default_factory=list)


class ModerationStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def set_status(self, user_id: str, status: str) -> tuple[int, bool, GraphEvent | None]:
        """Set the status; returns its version, whether a propagation is pending, and the
        change's event (None when the status was already that)."""
        params = {"id": user_id, "status": status, "event": event_id()}
        (row,) = await self._store.write("moderation/set_status", params)
        version = row["version"]
        event = None
        if row["previous"] != status:
            event = GraphEvent(params["event"], "status", user_id, "", version, status=status)
        return version, bool(row["fanout"]), event

    async def user_state(self, user_id: str) -> UserState | None:
        rows = await self._store.read("moderation/user_state", {"id": user_id}, fresh=True)
        if not rows:
            return None
        (row,) = rows
        return UserState(
            row["status"], bool(row["fanout"]), bool(row["erasing"]), bool(row["approving"])
        )

    async def pending_work(self) -> list[tuple[str, bool]]:
        """Users with unfinished status propagations or erasures: (id, erasing)."""
        rows = await self._store.read("moderation/pending_work", {}, fresh=True)
        return [(row["id"], bool(row["erasing"])) for row in rows]

    async def reflag_following(self, user_id: str, batch: int) -> list[str]:
        """Re-flag a batch of the user's follows for its status; the users they follow."""
        params = {"id": user_id, "batch": batch}
        rows = await self._store.write("moderation/fanout_following", params)
        return list(rows[0]["ids"]) if rows else []

    async def propagation_state(self, user_id: str) -> tuple[str, int, list[str]] | None:
        """(status, version, users still to refresh), or None for an unknown user."""
        rows = await self._store.read("moderation/fanout_state", {"id": user_id}, fresh=True)
        if not rows:
            return None
        return rows[0]["status"], rows[0]["version"], list(rows[0]["refresh"])

    async def propagation_done(self, user_id: str) -> bool:
        """Unmark the user, unless a newer status change made more work; whether it is done."""
        rows = await self._store.write("moderation/fanout_done", {"id": user_id})
        return not rows or bool(rows[0]["done"])

    async def follower_ids(self, user_id: str, batch: int) -> AsyncIterator[list[str]]:
        """Every follower of a user, streamed in batches (one read transaction: a long job's,
        NEO4J_JOB_TIMEOUT_SECONDS)."""
        chunk: list[str] = []
        params = {"id": user_id}
        async for record in self._store.stream("moderation/follower_ids", params, job=True):
            chunk.append(record["id"])
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    async def erase_begin(
        self, user_id: str, grace_us: int = 0
    ) -> tuple[bool, GraphEvent | None, list[str]]:
        """Mark the user for erasure and revoke the keys bound to it: (found, the erase event
        when this call began it, the ids of the keys revoked now). ``grace_us``: how long an
        API process may go on trusting a revoked key (the node is kept that long)."""
        params = {"id": user_id, "event": event_id(), "grace_us": grace_us}
        (row,) = await self._store.write("moderation/erase_begin", params)
        revoked = list(row["revoked"])
        if not row["found"] or row["already"]:
            return bool(row["found"]), None, revoked
        event = GraphEvent(params["event"], "erase", user_id, "", row["version"])
        return True, event, revoked

    async def erase_batch(self, user_id: str, side: Side, batch: int) -> list[tuple[str, str, int]]:
        """Delete one batch of the user's follows on one side; the removals (src, dst,
        version), none when that side is empty."""
        params = {"id": user_id, "batch": batch}
        if side is Side.FOLLOWING:
            rows = await self._store.write("moderation/erase_following", params)
            if not rows:
                return []
            return [(user_id, dst, rows[0]["version"]) for dst in rows[0]["ids"]]
        rows = await self._store.write("moderation/erase_followers", params)
        return [(src, user_id, version) for src, version in rows[0]["removed"]] if rows else []

    async def erase_pending(self, user_id: str) -> list[tuple[str, str, int]] | None:
        """The removals of the erasure's last batch (its mirror writes may be missing); None
        when the user is not being erased."""
        rows = await self._store.read("moderation/erase_pending", {"id": user_id}, fresh=True)
        if not rows:
            return None
        pending: Sequence[list[str]] = [item.split(" ") for item in rows[0]["pending"]]
        return [(src, dst, int(version)) for src, dst, version in pending]

    async def erase_blocks(self, user_id: str, batch: int) -> int:
        (row,) = await self._store.write("moderation/erase_blocks", {"id": user_id, "batch": batch})
        return int(row["deleted"])

    async def erase_end(self, user_id: str, batch: int, grace_us: int) -> ErasureEnd:
        """Delete the user if no follow is left and no revoked key may still be trusted."""
        params = {"id": user_id, "batch": batch, "grace_us": grace_us}
        (row,) = await self._store.write("moderation/erase_end", params)
        return ErasureEnd(
            bool(row["done"]), row["version"], row["wait_us"] / 1_000_000, list(row["revoked"])
        )
