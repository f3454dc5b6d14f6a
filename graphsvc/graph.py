"""Neo4j adapter: the source of truth for FOLLOWS edges.

Knows Cypher (by query name) and the driver; knows nothing of HTTP or Redis.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, RoutingControl

from graphsvc.cursor import Position
from graphsvc.model import EdgeChange, Entry, Side, Snapshot
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


class GraphStore:
    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self._driver = driver
        self._database = database

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
        counts = await self.snapshots([src, dst], fresh=True)
        return EdgeChange(
            src,
            dst,
            following,
            bool(row["changed"]),
            row["version"],
            counts[src].counts,
            counts[dst].counts,
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
        rows = await self._run(
            "snapshot",
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
                followers=_entries(row["followers"]),
                following=_entries(row["following"]),
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

    async def clock(self) -> int:
        """Neo4j's time in microseconds."""
        (row,) = await self._run("clock", {})
        return int(row["now_us"])

    async def await_indexes(self) -> None:
        await self._run("await_indexes", {})

    async def load_users(self, user_ids: Sequence[str]) -> None:
        await self._run("load_users", {"ids": list(user_ids)}, write=True)

    async def load_edges(self, rows: Sequence[Mapping[str, Any]]) -> int:
        (row,) = await self._run("load_edges", {"rows": list(rows)}, write=True)
        return int(row["created"])
