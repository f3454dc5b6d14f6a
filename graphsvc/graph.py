"""Neo4j adapter: the source of truth for FOLLOWS edges.

Knows Cypher (by query name) and the driver; knows nothing of HTTP or Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, RoutingControl

from graphsvc.cursor import Position
from graphsvc.model import EdgeChange, Entry, Side, Snapshot, UserCounts
from graphsvc.queries import query, statements
from graphsvc.settings import Settings

# Larger than any follow time (microseconds) a page can start from.
NEWEST = 2**62


def open_driver(settings: Settings) -> AsyncDriver:
    return AsyncGraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_user, settings.neo4j_password),
        max_connection_pool_size=settings.neo4j_pool_size,
    )


def _entries(pairs: Iterable[Sequence[Any]]) -> list[Entry]:
    return [Entry(user_id=uid, since=since) for since, uid in pairs]


class _CountReads:
    """Post-commit count reads of concurrent writes, coalesced into one query.

    A write registers its users after its commit and waits; the next query starts after
    every registered commit, so each write gets counts that include it. Writes that arrive
    while a query is running wait for the following one.
    """

    def __init__(self, store: GraphStore) -> None:
        self._store = store
        self._waiting: list[tuple[Sequence[str], asyncio.Future[dict[str, UserCounts]]]] = []
        self._task: asyncio.Task[None] | None = None

    async def read(self, user_ids: Sequence[str]) -> dict[str, UserCounts]:
        future: asyncio.Future[dict[str, UserCounts]] = asyncio.get_running_loop().create_future()
        self._waiting.append((user_ids, future))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        batch: list[tuple[Sequence[str], asyncio.Future[dict[str, UserCounts]]]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                ids = sorted({uid for user_ids, _ in batch for uid in user_ids})
                try:
                    found = await self._store.snapshots(ids, fresh=True)
                except Exception as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for user_ids, future in batch:
                    if future.done():  # its caller gave up
                        continue
                    missing = [uid for uid in user_ids if uid not in found]
                    if missing:
                        future.set_exception(LookupError(f"users {missing} vanished"))
                    else:
                        future.set_result({uid: found[uid].counts for uid in user_ids})
                batch = []
        finally:
            # Ended early (cancelled at shutdown): nobody may wait forever.
            for _, future in batch + self._waiting:
                if not future.done():
                    future.set_exception(RuntimeError("count read was cancelled"))
            self._waiting = []


class GraphStore:
    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self._driver = driver
        self._database = database
        self._count_reads = _CountReads(self)

    async def _run(
        self, name: str, params: Mapping[str, Any], *, write: bool = False
    ) -> list[neo4j.Record]:
        result = await self._driver.execute_query(
            query(name),
            params,
            database_=self._database,
            routing_=RoutingControl.WRITE if write else RoutingControl.READ,
            bookmark_manager_=None,
        )
        return result.records

    async def verify(self) -> None:
        await self._driver.verify_connectivity()

    async def apply_schema(self) -> None:
        for statement in statements("schema"):
            await self._driver.execute_query(
                statement, database_=self._database, bookmark_manager_=None
            )

    async def follow(self, src: str, dst: str) -> EdgeChange:
        (row,) = await self._run("follow", {"src": src, "dst": dst}, write=True)
        return await self._change(src, dst, row, following=True)

    async def unfollow(self, src: str, dst: str) -> EdgeChange | None:
        """None when either user has never existed (nothing to change, nothing to mirror)."""
        rows = await self._run("unfollow", {"src": src, "dst": dst}, write=True)
        return await self._change(src, dst, rows[0], following=False) if rows else None

    async def _change(
        self, src: str, dst: str, row: neo4j.Record, *, following: bool
    ) -> EdgeChange:
        # Counts are read after the commit: the followed user is not locked by the write, so
        # only a read that starts after the commit is sure to include it.
        counts = await self._count_reads.read([src, dst])
        return EdgeChange(
            src, dst, following, bool(row["changed"]), row["version"], counts[src], counts[dst]
        )

    async def snapshots(
        self,
        user_ids: Sequence[str],
        *,
        followers_limit: int = 0,
        following_limit: int = 0,
        fresh: bool = False,
    ) -> dict[str, Snapshot]:
        """Newest entries and exact counts for many users; unknown users are absent.

        ``fresh`` reads where writes go (the cluster leader), so a read right after a commit
        is sure to see it.
        """
        lists = followers_limit or following_limit
        rows = await self._run(
            "snapshot" if lists else "counts",
            {
                "ids": list(user_ids),
                "followers_limit": followers_limit,
                "following_limit": following_limit,
            },
            write=fresh,
        )
        return {
            row["id"]: Snapshot(
                user_id=row["id"],
                at=row["at"],
                followers_count=row["followers_count"],
                following_count=row["following_count"],
                followers=_entries(row["followers"]) if lists else [],
                following=_entries(row["following"]) if lists else [],
            )
            for row in rows
        }

    async def page(
        self, side: Side, user_id: str, after: Position | None, limit: int
    ) -> list[Entry]:
        """Keyset page, newest first, strictly older than ``after``."""
        params = {
            "id": user_id,
            "since": after.since if after else NEWEST,
            "after": after.user_id if after else "",
            "limit": limit,
        }
        rows = await self._run(f"{side.label}_page", params)
        return [Entry(user_id=row["id"], since=row["since"]) for row in rows]

    async def user_ids(self, batch: int = 10_000) -> AsyncIterator[list[str]]:
        """All user ids, in id order, ``batch`` at a time."""
        after = ""
        while True:
            rows = await self._run("user_ids_page", {"after": after, "limit": batch})
            if not rows:
                return
            ids = [row["id"] for row in rows]
            yield ids
            after = ids[-1]

    async def user_count(self) -> int:
        (row,) = await self._run("user_count", {})
        return int(row["users"])

    async def await_indexes(self) -> None:
        await self._run("await_indexes", {})

    async def load_users(self, user_ids: Sequence[str]) -> None:
        await self._run("load_users", {"ids": list(user_ids)}, write=True)

    async def load_edges(self, rows: Sequence[Mapping[str, Any]]) -> int:
        (row,) = await self._run("load_edges", {"rows": list(rows)}, write=True)
        return int(row["created"])
