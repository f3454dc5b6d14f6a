"""Snapshots: a user's exact counts and newest list entries, read from Neo4j at one moment.

They are what the mirror is built from (on a cold read, a rebuild, a repair; read under the
users' locks, so that numbered count changes apply after them) and what the consistency check
compares the mirror against.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.model import Counts, Entry, Snapshot, UserCounts

# The count columns of snapshots/counts and snapshots/snapshot, in the order of Counts' fields.
_COUNT_COLUMNS = (
    "followers_count",
    "following_count",
    "followers_active",
    "following_active",
    "friends",
)


def entries_from_rows(pairs: Iterable[Sequence[Any]]) -> list[Entry]:
    """(since, user id) pairs as entries. A follow deleted by a transaction that commits
    while a query reads it can show its ``since`` as null (read committed): it is gone, so it
    is left out."""
    return [Entry(user_id=uid, since=since) for since, uid in pairs if since is not None]


class SnapshotStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def snapshots(
        self,
        user_ids: Sequence[str],
        *,
        followers_limit: int = 0,
        following_limit: int = 0,
        fresh: bool = False,
        lock: bool = False,
    ) -> dict[str, Snapshot]:
        """Newest entries and exact counts for many users; unknown users are absent.

        ``fresh`` reads where writes go (the cluster leader), so a read right after a commit
        is sure to see it. ``lock``: read each user under its lock, numbering the read in its
        count sequence (what the mirror installs must be read so; a check that only compares
        need not).
        """
        lists = followers_limit or following_limit
        name = "snapshots/snapshot" if lists else "snapshots/counts"
        params = {
            "ids": sorted(set(user_ids)) if lock else list(user_ids),
            "followers_limit": followers_limit,
            "following_limit": following_limit,
        }
        if lock:
            rows = await self._store.transaction(
                lambda run: run(name, params, "snapshots/number_reads")
            )
        else:
            rows = await self._store.read(name, params, fresh=fresh)
        return {
            row["id"]: Snapshot(
                user_id=row["id"],
                at=row["at"],
                totals=Counts(*(row[name] for name in _COUNT_COLUMNS)),
                followers=entries_from_rows(row["followers"]) if lists else [],
                following=entries_from_rows(row["following"]) if lists else [],
                inactive=bool(row.get("inactive")),
                cs=row["cs"],
            )
            for row in rows
        }

    async def read_counts(self, user_ids: Sequence[str]) -> dict[str, UserCounts]:
        """Counts read now under the users' locks, each read numbered: what the mirror
        installs after a change that numbered none (a status propagation, an erasure)."""
        found = await self.snapshots(user_ids, lock=True)
        return {uid: snap.reading for uid, snap in found.items()}

    async def inactive_users(self, batch: int = 10_000) -> AsyncIterator[list[tuple[str, int]]]:
        """Every inactive user with its status version, in id order, ``batch`` at a time (a
        long job's walk: NEO4J_JOB_TIMEOUT_SECONDS a batch)."""
        after = ""
        while True:
            params = {"after": after, "limit": batch}
            rows = await self._store.read("snapshots/inactive_users", params, fresh=True, job=True)
            if not rows:
                return
            yield [(row["id"], row["version"]) for row in rows]
            after = rows[-1]["id"]

    async def user_ids(self, batch: int = 10_000) -> AsyncIterator[list[str]]:
        """All user ids, in id order, ``batch`` at a time (a long job's walk:
        NEO4J_JOB_TIMEOUT_SECONDS a batch)."""
        after = ""
        while True:
            rows = await self._store.read(
                "snapshots/user_ids_page", {"after": after, "limit": batch}, job=True
            )
            if not rows:
                return
            ids = [row["id"] for row in rows]
            yield ids
            after = ids[-1]

    async def clock(self) -> int:
        """Neo4j's clock (microseconds), read where writes go: later than every commit
        before this call."""
        (row,) = await self._store.read("snapshots/clock", {}, fresh=True)
        return int(row["at"])

    async def user_count(self) -> int:
        (row,) = await self._store.read("snapshots/user_count", {})
        return int(row["users"])
