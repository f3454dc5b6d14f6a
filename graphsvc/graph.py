"""Neo4j adapter: the source of truth for FOLLOWS edges.

Knows Cypher (by query name) and the driver; knows nothing of HTTP or Redis.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, RoutingControl
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError

from graphsvc.cursor import Position
from graphsvc.model import (
    BlockChange,
    Counts,
    EdgeChange,
    Entry,
    GraphEvent,
    Refusal,
    Relationship,
    Side,
    Snapshot,
    UserCounts,
    UserState,
)
from graphsvc.queries import query, statements
from graphsvc.settings import Settings

# The count columns of counts.cypher and snapshot.cypher, in the order of Counts' fields.
_COUNT_COLUMNS = (
    "followers_count", "following_count", "followers_active", "following_active", "friends"
)  # fmt: skip

log = logging.getLogger(__name__)

# What Neo4j raises when it is unreachable, stopping or starting (DatabaseUnavailable is a
# TransientError), or still failing after NEO4J_RETRY_SECONDS of retries (deadlocks).
NEO4J_DOWN = (ServiceUnavailable, SessionExpired, TransientError)

# Larger than any follow time (microseconds) a page can start from.
NEWEST = 2**62
NO_LIMIT = 2**31 - 1


def open_driver(settings: Settings) -> AsyncDriver:
    return AsyncGraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_user, settings.neo4j_password),
        max_connection_pool_size=settings.neo4j_pool_size,
        # A write to an unreachable server fails in seconds (a 503), not after the driver's
        # default 30 s of retries.
        max_transaction_retry_time=settings.neo4j_retry_seconds,
        connection_timeout=settings.neo4j_connect_timeout,
        connection_acquisition_timeout=settings.neo4j_connect_timeout
        + settings.neo4j_retry_seconds,
        # Labels such as :Inactive exist only once used; warnings on every query are noise.
        notifications_min_severity="OFF",
    )


def _event_id() -> str:
    return uuid.uuid4().hex


def _entries(pairs: Iterable[Sequence[Any]]) -> list[Entry]:
    # A follow deleted by a transaction that commits while a query reads it can show its
    # `since` as null (read committed): it is gone, so it is left out.
    return [Entry(user_id=uid, since=since) for since, uid in pairs if since is not None]


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
                    # A user erased meanwhile has no reading: its half of a change is moot.
                    future.set_result({uid: found[uid].reading for uid in user_ids if uid in found})
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
        self, name: str, params: Mapping[str, Any], *, write: bool = False, fresh: bool = False
    ) -> list[neo4j.Record]:
        """Run a named query. Reads are auto-commit transactions (one round trip, where a
        managed transaction takes two: measured 1.3 ms against 2.5 ms for ``RETURN 1``);
        ``fresh`` reads go where writes go (the cluster leader), so they see every commit.
        ``write`` queries run in managed transactions, which the driver retries on transient
        errors (deadlocks)."""
        if not write:
            mode = neo4j.WRITE_ACCESS if fresh else neo4j.READ_ACCESS
            async with self._driver.session(
                database=self._database, default_access_mode=mode, bookmark_manager=None
            ) as session:
                result = await session.run(query(name), params)
                return [record async for record in result]
        result = await self._driver.execute_query(
            query(name),
            params,
            database_=self._database,
            routing_=RoutingControl.WRITE,
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

    async def follow(
        self,
        src: str,
        dst: str,
        *,
        max_following: int = NO_LIMIT,
        per_window: int = NO_LIMIT,
        window_us: int = 1,
    ) -> EdgeChange | Refusal:
        """Follow unless a rule refuses the new edge (then nothing changed); the limits'
        defaults are off (the service passes its settings)."""
        params = {"src": src, "dst": dst, "max_following": max_following,
                  "per_window": per_window, "window_us": window_us, "event": _event_id()}  # fmt: skip
        (row,) = await self._run("follow", params, write=True)
        if row["refused"] is not None:
            return Refusal(row["refused"], row["retry_at"])
        return await self._change(params, row, following=True)

    async def unfollow(self, src: str, dst: str) -> EdgeChange | None:
        """None when either user has never existed (nothing to change, nothing to mirror)."""
        params = {"src": src, "dst": dst, "event": _event_id()}
        rows = await self._run("unfollow", params, write=True)
        return await self._change(params, rows[0], following=False) if rows else None

    async def _change(
        self, params: Mapping[str, Any], row: neo4j.Record, *, following: bool
    ) -> EdgeChange:
        # Counts are read after the commit: the followed user is not locked by the write, so
        # only a read that starts after the commit is sure to include it.
        src, dst, changed, version = params["src"], params["dst"], row["changed"], row["version"]
        counts = await self._counts_after_commit([src, dst])
        kind = "follow" if following else "unfollow"
        event = GraphEvent(params["event"], kind, src, dst, version) if changed else None
        if counts is None:
            return EdgeChange(src, dst, following, bool(changed), version, None, None, event, False)
        return EdgeChange(
            src, dst, following, bool(changed), version, counts.get(src), counts.get(dst), event
        )

    async def _counts_after_commit(self, user_ids: Sequence[str]) -> dict[str, UserCounts] | None:
        """Counts read after a commit; None when Neo4j became unreachable since: the write is
        committed all the same, and the outbox relay mirrors it when Neo4j is back."""
        try:
            return await self._count_reads.read(user_ids)
        except Exception as exc:  # the write stands whatever went wrong here
            log.warning("count read after a commit failed (%r); the outbox relay mirrors it", exc)
            return None

    async def read_counts(self, user_ids: Sequence[str]) -> dict[str, UserCounts]:
        """Counts read now, where writes go (after a commit that changed them)."""
        found = await self.snapshots(user_ids, fresh=True)
        return {uid: snap.reading for uid, snap in found.items()}

    async def removals(
        self, pairs: Sequence[tuple[str, str, int]], *, committed: bool = False
    ) -> list[EdgeChange]:
        """Edge changes for committed removals (src, dst, version), with counts read now.
        ``committed``: the caller's write is acknowledged whatever happens, so an unreachable
        Neo4j yields changes without counts (``counts_read`` false) rather than an error."""
        users = sorted({u for s, d, _ in pairs for u in (s, d)})
        counts = await (
            self._counts_after_commit(users) if committed else self._count_reads.read(users)
        )
        if counts is None:
            return [EdgeChange(s, d, False, True, v, None, None, None, False) for s, d, v in pairs]
        return [EdgeChange(s, d, False, True, v, counts.get(s), counts.get(d)) for s, d, v in pairs]

    async def block(self, src: str, dst: str) -> BlockChange:
        """Block; both directions come back as removals, also when there was no follow: the
        mirror applies a removal newer than any instance of the edge harmlessly, so a retried
        block repairs a mirror write that an earlier attempt lost."""
        ids = [_event_id() for _ in range(3)]
        params = {"src": src, "dst": dst, "ids": sorted((src, dst)), "events": ids}
        (row,) = await self._run("block", params, write=True)
        ab, ba = row["following_version"], row["followed_by_version"]
        changes = await self.removals([(src, dst, ab), (dst, src, ba)], committed=True)
        removed = (bool(row["removed_following"]), bool(row["removed_followed_by"]))
        changes = [replace(c, changed=r) for c, r in zip(changes, removed, strict=True)]
        events = [GraphEvent(ids[0], "block", src, dst, ab)] if row["created"] else []
        events += [
            GraphEvent(ids[n], "unfollow", s, d, v, cause="block")
            for n, s, d, v, r in ((1, src, dst, ab, removed[0]), (2, dst, src, ba, removed[1]))
            if r
        ]
        return BlockChange(bool(row["created"]), changes, events)

    async def unblock(self, src: str, dst: str) -> GraphEvent | None:
        """The unblock's event; None when there was no block."""
        params = {"src": src, "dst": dst, "event": _event_id()}
        (row,) = await self._run("unblock", params, write=True)
        return (
            GraphEvent(params["event"], "unblock", src, dst, row["version"])
            if row["removed"]
            else None
        )

    async def set_status(self, user_id: str, status: str) -> tuple[int, bool, GraphEvent | None]:
        """Set the status; returns its version, whether a fan-out is pending, and the
        change's event (None when the status was already that)."""
        params = {"id": user_id, "status": status, "event": _event_id()}
        (row,) = await self._run("set_status", params, write=True)
        version = row["version"]
        event = None
        if row["previous"] != status:
            event = GraphEvent(params["event"], "status", user_id, "", version, status=status)
        return version, bool(row["fanout"]), event

    async def user_state(self, user_id: str) -> UserState | None:
        rows = await self._run("user_state", {"id": user_id}, fresh=True)
        if not rows:
            return None
        (row,) = rows
        return UserState(row["status"], bool(row["fanout"]), bool(row["erasing"]))

    async def inactive_users(self, batch: int = 10_000) -> AsyncIterator[list[tuple[str, int]]]:
        """Every inactive user with its status version, in id order, ``batch`` at a time."""
        after = ""
        while True:
            rows = await self._run("inactive_users", {"after": after, "limit": batch}, fresh=True)
            if not rows:
                return
            yield [(row["id"], row["version"]) for row in rows]
            after = rows[-1]["id"]

    async def pending_work(self) -> list[tuple[str, bool]]:
        """Users with unfinished fan-outs or erasures: (id, erasing)."""
        rows = await self._run("pending_work", {}, fresh=True)
        return [(row["id"], bool(row["erasing"])) for row in rows]

    async def fanout_following(self, user_id: str, batch: int) -> list[str]:
        rows = await self._run("fanout_following", {"id": user_id, "batch": batch}, write=True)
        return list(rows[0]["ids"]) if rows else []

    async def fanout_state(self, user_id: str) -> tuple[str, int, list[str]] | None:
        """(status, version, users still to refresh), or None for an unknown user."""
        rows = await self._run("fanout_state", {"id": user_id}, fresh=True)
        if not rows:
            return None
        return rows[0]["status"], rows[0]["version"], list(rows[0]["refresh"])

    async def fanout_done(self, user_id: str) -> bool:
        rows = await self._run("fanout_done", {"id": user_id}, write=True)
        return not rows or bool(rows[0]["done"])

    async def follower_ids(self, user_id: str, batch: int) -> AsyncIterator[list[str]]:
        """Every follower of a user, streamed in batches (one read transaction)."""
        async with self._driver.session(
            database=self._database, default_access_mode=neo4j.WRITE_ACCESS
        ) as session:
            result = await session.run(query("follower_ids"), {"id": user_id})
            chunk: list[str] = []
            async for record in result:
                chunk.append(record["id"])
                if len(chunk) >= batch:
                    yield chunk
                    chunk = []
            if chunk:
                yield chunk

    async def erase_begin(self, user_id: str) -> tuple[bool, GraphEvent | None]:
        """Mark the user for erasure: (found, the erase event when this call began it)."""
        params = {"id": user_id, "event": _event_id()}
        rows = await self._run("erase_begin", params, write=True)
        if not rows:
            return False, None
        row = rows[0]
        began = not row["already"]
        return True, GraphEvent(
            params["event"], "erase", user_id, "", row["version"]
        ) if began else None

    async def outbox_due(self, cutoff_us: int, limit: int) -> list[GraphEvent]:
        """The oldest outbox events written before ``cutoff_us``."""
        rows = await self._run("outbox_due", {"cutoff": cutoff_us, "limit": limit}, fresh=True)
        return [
            GraphEvent(row["id"], row["type"], row["src"], row["dst"], row["version"],
                       row["status"], row["cause"])
            for row in rows
        ]  # fmt: skip

    async def outbox_delete(self, event_ids: Sequence[str]) -> int:
        (row,) = await self._run("outbox_delete", {"ids": list(event_ids)}, write=True)
        return int(row["deleted"])

    async def erase_batch(self, user_id: str, side: Side, batch: int) -> list[tuple[str, str, int]]:
        """Delete one batch of the user's follows on one side; the removals (src, dst,
        version), none when that side is empty."""
        params = {"id": user_id, "batch": batch}
        if side is Side.FOLLOWING:
            rows = await self._run("erase_following", params, write=True)
            if not rows:
                return []
            return [(user_id, dst, rows[0]["version"]) for dst in rows[0]["ids"]]
        rows = await self._run("erase_followers", params, write=True)
        return [(src, user_id, version) for src, version in rows[0]["removed"]] if rows else []

    async def erase_pending(self, user_id: str) -> list[tuple[str, str, int]]:
        """The removals of the erasure's last batch (its mirror writes may be missing)."""
        rows = await self._run("erase_pending", {"id": user_id}, fresh=True)
        pending = [item.split(" ") for item in rows[0]["pending"]] if rows else []
        return [(src, dst, int(version)) for src, dst, version in pending]

    async def erase_blocks(self, user_id: str, batch: int) -> int:
        (row,) = await self._run("erase_blocks", {"id": user_id, "batch": batch}, write=True)
        return int(row["deleted"])

    async def erase_end(self, user_id: str) -> tuple[bool, int | None]:
        """Delete the user if nothing is left: (done, version to forget its status by; None
        when there was no node to delete)."""
        (row,) = await self._run("erase_end", {"id": user_id}, write=True)
        return bool(row["done"]), row["version"]

    async def relationships(self, user_id: str, others: Sequence[str]) -> list[Relationship]:
        (row,) = await self._run("relationships", {"id": user_id, "ids": list(others)})
        return [Relationship(*values) for values in row["rows"]]

    async def wipe(self) -> None:
        """Delete everything (the evaluation's own server only)."""
        async with self._driver.session(
            database=self._database, default_access_mode=neo4j.WRITE_ACCESS, bookmark_manager=None
        ) as session:
            await (await session.run(query("wipe"))).consume()

    async def interactions_checkpoint(self) -> str:
        (row,) = await self._run("interactions_checkpoint", {}, fresh=True)
        return row["last"]

    async def apply_interactions(
        self, pairs: Sequence[Mapping[str, Any]], *, checkpoint: str, last: str, half_life_us: int
    ) -> bool:
        """Add aggregated interactions once; False when another flush moved the checkpoint."""
        params = {"pairs": list(pairs), "checkpoint": checkpoint, "last": last, "h": half_life_us}
        (row,) = await self._run("interactions_apply", params, write=True)
        return bool(row["applied"])

    async def affinities(
        self, user_id: str, *, now: int, half_life_us: int, limit: int
    ) -> list[tuple[str, float]]:
        params = {"id": user_id, "now": now, "h": half_life_us, "limit": limit}
        rows = await self._run("affinities", params)
        return [(row["id"], row["affinity"]) for row in rows]

    async def friends_page(
        self, user_id: str, after: Position | None, limit: int, *, ref: int, half_life_us: int
    ) -> list[Entry]:
        params = {
            "id": user_id,
            "score": after.score if after and after.score is not None else float("inf"),
            "since": after.since if after else NEWEST,
            "after": after.user_id if after else "",
            "limit": limit,
            "ref": ref,
            "h": half_life_us,
        }
        rows = await self._run("friends_page", params)
        return [
            Entry(row["id"], row["since"], row["score"]) for row in rows if row["since"] is not None
        ]

    async def suggestions(self, user_id: str, **params: Any) -> list[neo4j.Record]:
        return await self._run("suggestions", {"id": user_id, **params})

    async def popular(self, limit: int) -> list[str]:
        rows = await self._run("popular", {"limit": limit})
        return [row["id"] for row in rows]

    async def suggestable(self, user_id: str, candidates: Sequence[str]) -> list[str]:
        (row,) = await self._run("suggest_filter", {"id": user_id, "ids": list(candidates)})
        return list(row["ids"])

    async def dismiss(self, user_id: str, target_id: str) -> bool:
        (row,) = await self._run("dismiss", {"id": user_id, "target": target_id}, write=True)
        return bool(row["created"])

    async def id_page(
        self, name: str, params: Mapping[str, Any], after: str, limit: int
    ) -> tuple[int, list[str]]:
        """Run a query answering one row of (total, page of ids)."""
        (row,) = await self._run(name, {**params, "after": after, "limit": limit})
        return int(row["total"]), list(row["page"])

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
            fresh=fresh,
        )
        return {
            row["id"]: Snapshot(
                user_id=row["id"],
                at=row["at"],
                totals=Counts(*(row[name] for name in _COUNT_COLUMNS)),
                followers=_entries(row["followers"]) if lists else [],
                following=_entries(row["following"]) if lists else [],
                inactive=bool(row.get("inactive")),
            )
            for row in rows
        }

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
        of the list a named query (friends, celebrities) selects from the followings."""
        params |= {
            "id": user_id,
            "since": after.since if after else NEWEST,
            "after": after.user_id if after else "",
            "limit": limit,
        }
        rows = await self._run(name or f"{side.label}_page", params)
        return _entries((row["since"], row["id"]) for row in rows)

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
