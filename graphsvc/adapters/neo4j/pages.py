"""Keyset pages of lists, straight from Neo4j: past a capped hot list, for celebrities-only,
friends and blocks lists, and id-ordered pages with totals (common and familiar lists).

Followers, following and celebrities pages are seeks in the FOLLOWS indexes at the cursor's
position, stopped at the page's size: the same work at any depth of any list. Common lists
examine at most COMMON_SCAN_MAX entries of the shorter list per request (``common``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphsvc.adapters.neo4j.snapshots import entries_from_rows
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.audience import AudienceScan, Operand
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Entry, Familiar, IdSlice, Side

# Larger than any follow time (microseconds) a page can start from.
NEWEST = 2**62


def keyset_position(after: Position | None) -> dict[str, Any]:
    """A walk's position as the page queries take it: ($since, $after), the newest end when
    ``after`` is None."""
    return {"since": after.since if after else NEWEST, "after": after.user_id if after else ""}


async def keyset_page(
    store: Neo4jStore,
    name: str,
    user_id: str,
    after: Position | None,
    limit: int,
    params: dict[str, Any] | None = None,
) -> list[Entry]:
    """A newest-first keyset page of a named query answering (since, id) rows: the entries of
    the user's list strictly after ``after`` (from the newest end when None)."""
    params = {**(params or {}), "id": user_id, **keyset_position(after), "limit": limit}
    rows = await store.read(name, params)
    return entries_from_rows((row["since"], row["id"]) for row in rows)


class PageStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def page(
        self,
        side: Side,
        user_id: str,
        after: Position | None,
        limit: int,
        *,
        name: str | None = None,
        **params: Any,
    ) -> list[Entry]:
        """Keyset page, newest first, strictly older than ``after``: of one side's list, or
        of the list a named query (celebrities) selects from the followings."""
        name = name or f"pages/{side.label}_page"
        return await keyset_page(self._store, name, user_id, after, limit, params)

    async def blocks_page(self, user_id: str, after: Position | None, limit: int) -> list[Entry]:
        """Keyset page of whom the user blocks, newest block first, strictly after ``after``."""
        return await keyset_page(self._store, "pages/blocks_page", user_id, after, limit)

    async def friends_page(
        self, user_id: str, after: Position | None, limit: int, *, ref: int, half_life_us: int
    ) -> list[Entry]:
        params = {
            "id": user_id,
            "top": float("inf"),
            **keyset_position(after),
            "limit": limit,
            "ref": ref,
            "h": half_life_us,
        }
        rows = await self._store.read("pages/friends_page", params)
        return [
            Entry(row["id"], row["since"], row["score"]) for row in rows if row["since"] is not None
        ]

    async def id_page(
        self, name: str, params: Mapping[str, Any], after: str, limit: int
    ) -> tuple[int, list[str]]:
        """Run a query answering one row of (total, page of ids)."""
        (row,) = await self._store.read(name, {**params, "after": after, "limit": limit})
        return int(row["total"]), list(row["page"])

    async def familiar_many(
        self, viewer: str, targets: list[str], *, reader: str | None, everyone: bool, limit: int
    ) -> dict[str, Familiar]:
        """Per target, the viewer's familiar followers of it: the count and the first
        ``limit`` (``pages/familiar_followers_many``)."""
        if not targets:
            return {}
        params = {
            "viewer": viewer,
            "targets": targets,
            "reader": reader,
            "everyone": everyone,
            "limit": limit,
        }
        (row,) = await self._store.read("pages/familiar_followers_many", params)
        return {t: Familiar(t, int(total), list(ids)) for t, total, ids in row["rows"]}

    async def distance_ends(self, source: str, target: str) -> tuple[int, int]:
        """The follows ``source`` makes and ``target`` receives (``pages/distance_ends``)."""
        params = {"source": source, "target": target}
        (row,) = await self._store.read("pages/distance_ends", params)
        return int(row["out"]), int(row["in"])

    async def step(
        self, ids: list[str], *, out: bool, reader: str | None, everyone: bool
    ) -> dict[str, int]:
        """The active users ``ids`` follow (``out``) or who follow them, through follows the
        reader may see, each with what a step from it would read (``pages/distance_step``)."""
        params = {"ids": ids, "out": out, "reader": reader, "everyone": everyone}
        (row,) = await self._store.read("pages/distance_step", params)
        return {user: int(degree) for user, degree in row["reached"]}

    async def audience_scan(
        self,
        driver: Operand,
        tests: list[tuple[Operand, bool, bool]],
        after: str,
        scan: int,
    ) -> AudienceScan:
        """The entries of the driver's list after ``after`` (at most ``scan`` read, in id
        order) that are in each test's list (or, negated, not): ``pages/audience_scan``. A
        test is (operand, negated, read): ``read`` when its list is short enough to read
        over the range rather than probe per entry."""
        params = {
            "driver": driver.owner,
            "followers": driver.side is Side.FOLLOWERS,
            "after": after,
            "scan": scan,
            "tests": [
                {"id": o.owner, "followers": o.side is Side.FOLLOWERS, "neg": neg, "read": read}
                for o, neg, read in tests
            ],
        }
        (row,) = await self._store.read("pages/audience_scan", params)
        return AudienceScan(int(row["examined"]), row["last"], list(row["matched"]))

    async def list_sizes(self, operands: list[Operand]) -> dict[Operand, int]:
        """How long each operand's list is (``pages/list_sizes``: the degree store)."""
        ids = sorted({o.owner for o in operands})
        rows = await self._store.read("pages/list_sizes", {"ids": ids})
        sizes = {row["id"]: (row["followers"], row["following"]) for row in rows}
        return {
            o: sizes.get(o.owner, (0, 0))[0 if o.side is Side.FOLLOWERS else 1] for o in operands
        }

    async def common(
        self, name: str, a: str, b: str, after: str, limit: int, *, scan: int
    ) -> IdSlice:
        """Up to ``limit`` ids of a common list (``pages/common_followers`` or
        ``pages/common_following``) after ``after``, in id order, with its total; at most
        ``scan`` entries of the shorter list examined for each. A page that came short of
        ``limit`` while the shorter list is longer than ``scan`` is looked up where it
        stopped (``<name>_end``, ``scan`` index entries at most)."""
        params = {"a": a, "b": b, "after": after, "limit": limit, "scan": scan}
        rows = await self._store.read(name, params)
        if not rows:  # either user unknown
            return IdSlice(0, [])
        (row,) = rows
        page = list(row["page"])
        stopped_at = None
        if len(page) < limit and row["windowed"]:
            ends = await self._store.read(
                f"{name}_end", {"small": row["small"], "after": after, "scan": scan}
            )
            stopped_at = ends[0]["id"] if ends else None
        return IdSlice(int(row["total"]), page, bool(row["exact"]), stopped_at)
