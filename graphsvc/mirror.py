"""Redis adapter: the mirror of hot follower/following lists and exact counts.

Per user ``u`` (every key carries the hash tag ``{u}``, so one user's keys share a cluster slot):

- ``<prefix>m:{u}``  hash: exact counts, when Neo4j read them, and per-list build state
- ``<prefix>r:{u}``  sorted set of followers, score = follow time (microseconds), newest N kept
- ``<prefix>g:{u}``  sorted set of followings, same shape
- ``<prefix>j:{u}``  short-lived journal of removals (and of additions while a list is cold)
- ``<prefix>t:{u}``  when Neo4j stamped each journal entry (read after its commit)

and, for all users, ``<prefix>x:{status}`` (the set of inactive users, which list reads leave
out; the member ``""`` marks it as built) with ``<prefix>xv:{status}`` (each user's status
version).

All logic that must be atomic lives in the Lua scripts beside this file (``lua/``); each script
touches one user's keys only (or the two ``{status}`` keys). The protocol is described in
``lua/common.lua``. On a single Redis a page is one script that also filters out inactive users;
on a Redis Cluster the inactive set lives in another slot, so the page script returns the raw
entries and the filter is a second round trip (SMISMEMBER).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import ResponseError

try:  # C packing of commands for bulk loads; optional
    from hiredis import pack_command
except ImportError:  # pragma: no cover
    pack_command = None

from graphsvc.cursor import Position
from graphsvc.model import Counts, EdgeChange, Entry, Side, Snapshot, UserCounts
from graphsvc.redisconn import Batch, Client, is_cluster
from graphsvc.settings import Settings

_LUA = Path(__file__).resolve().parent / "lua"
# The meta hash's count fields, in the order of Counts.values().
COUNT_FIELDS = ("fr", "fg", "fa", "ga", "mu")


@cache
def script_source(name: str) -> str:
    """A script with the shared prelude; a ``#!lua`` flags line must stay the first line."""
    body = (_LUA / f"{name}.lua").read_text(encoding="utf-8")
    shebang = ""
    if body.startswith("#!"):
        shebang, _, body = body.partition("\n")
        shebang += "\n"
    return shebang + (_LUA / "common.lua").read_text(encoding="utf-8") + "\n" + body


def _micros(score: str | float) -> int:
    """A sorted-set score back to integer microseconds (exact below 2**53)."""
    return int(float(score))


class StatusesMissing(Exception):
    """The set of inactive users is not in Redis (new, flushed): build it, then ask again."""


@dataclass(frozen=True, slots=True)
class HotPage:
    """Entries served by the hot list; ``truncated`` means older entries live only in Neo4j."""

    entries: list[Entry]
    truncated: bool


@dataclass(frozen=True, slots=True)
class MirroredUser:
    """Everything the mirror holds for one user (for consistency checks)."""

    counts: Counts | None
    lists: dict[Side, tuple[list[Entry], Position | None] | None]


class Mirror:
    def __init__(
        self, client: Client, settings: Settings, *, split_page: bool | None = None
    ) -> None:
        """``split_page``: filter pages in a second round trip (default: on a cluster only,
        where it must; tests also run it on a single Redis)."""
        self._redis = client
        self._cluster = is_cluster(client)
        self._split_page = self._cluster if split_page is None else split_page
        self._prefix = settings.redis_prefix
        self._cap = settings.hot_list_cap
        self._window_us = settings.mirror_journal_seconds * 1_000_000
        self._edge = client.register_script(script_source("edge"))
        self._install = client.register_script(script_source("install"))
        self._install_counts = client.register_script(script_source("install_counts"))
        self._page = client.register_script(script_source("page"))
        self._refresh_counts = client.register_script(script_source("refresh_counts"))
        self._status = client.register_script(script_source("status"))
        self._drop = client.register_script(script_source("drop"))
        self._inactive = f"{self._prefix}x:{{status}}"
        self._status_versions = f"{self._prefix}xv:{{status}}"
        self._recent = f"{self._prefix}recent"

    @property
    def client(self) -> Client:
        return self._redis

    def _key(self, kind: str, user_id: str) -> str:
        return f"{self._prefix}{kind}:{{{user_id}}}"

    def keys(self, user_id: str) -> list[str]:
        """All of one user's keys: meta, followers, following, journal, journal stamps."""
        return [self._key(kind, user_id) for kind in ("m", "r", "g", "j", "t")]

    def _side_keys(self, user_id: str, side: Side) -> list[str]:
        return [self._key(kind, user_id) for kind in ("m", side.value, "j", "t")]

    async def ping(self) -> None:
        await self._redis.ping()

    # -- writes -------------------------------------------------------------------------------

    async def apply(self, change: EdgeChange) -> None:
        """Mirror one committed edge change: two single-user scripts, one round trip."""
        await self.apply_many([change])

    async def apply_many(
        self, changes: Sequence[EdgeChange], also: Callable[[Any], None] | None = None
    ) -> None:
        """Mirror committed edge changes, each as two single-user scripts, pipelined, and note
        the users as recently written (for `graphsvc reconcile --every`). ``also`` queues
        more commands (the change's events and their acks) that must run only once the mirror
        write did: on the same pipeline, after it, on a single Redis; in a second round trip on
        a cluster."""
        calls = []
        touched: set[str] = set()
        for change in changes:
            op = "+" if change.following else "-"
            halves = (
                (change.src, Side.FOLLOWING, change.dst, change.src_counts),
                (change.dst, Side.FOLLOWERS, change.src, change.dst_counts),
            )
            for user, side, member, reading in halves:
                if reading is None:
                    continue
                args = [side.value, op, member, change.version, reading.at,
                        *reading.counts.values(), self._cap, self._window_us]  # fmt: skip
                calls.append((self._side_keys(user, side), args))
                touched.add(user)
        if len(calls) >= 256:
            await self._run_many(self._edge, calls)
            calls = []
        batch = Batch(self._redis)
        for keys, args in calls:
            batch.script(self._edge, keys, args)
        if touched:
            recent = dict.fromkeys(touched, time.time())
            batch.call(lambda pipe: pipe.zadd(self._recent, recent))
        if also is not None and not self._cluster:
            # One server runs a pipeline in order: ``also`` (the events and their acks) runs
            # after the scripts, and an outage or a refused write (OOM, READONLY) stops both.
            batch.call(also)
            also = None
        await batch.execute()
        if also is not None:  # on a cluster, another node: only once the mirror write is done
            after = Batch(self._redis)
            after.call(also)
            await after.execute()

    async def written_since(self, seconds_ago: float) -> list[str]:
        """Users whose mirror was written in the last ``seconds_ago`` seconds."""
        return await self._redis.zrange(
            self._recent, time.time() - seconds_ago, "+inf", byscore=True
        )

    async def forget_written_before(self, seconds_ago: float) -> None:
        await self._redis.zremrangebyscore(self._recent, "-inf", time.time() - seconds_ago)

    async def refresh_counts(self, readings: Mapping[str, UserCounts]) -> None:
        """Counts read after a commit that changed them, for users the commit did not write
        through an edge change (status fan-outs)."""
        calls = [([self._key("m", user_id)], [reading.at, *reading.counts.values()])
                 for user_id, reading in readings.items()]  # fmt: skip
        await self._run_many(self._refresh_counts, calls)

    async def install(self, snapshots: Iterable[Snapshot], sides: Sequence[Side]) -> None:
        """Build the given lists (and counts) from Neo4j snapshots, pipelined."""
        if not sides:
            calls = [([self._key("m", snap.user_id)], [snap.at, *snap.totals.values()])
                     for snap in snapshots]  # fmt: skip
            await self._run_many(self._install_counts, calls)
            return
        lists = [
            (snap.user_id, side, snap.at, snap.totals,
             [(e.since, e.user_id) for e in snap.entries(side)])
            for snap in snapshots for side in sides
        ]  # fmt: skip
        await self.install_lists(lists)

    async def install_lists(
        self, lists: Iterable[tuple[str, Side, int, Counts, Sequence[tuple[int, str]]]]
    ) -> None:
        """Install lists given as (user, side, read at, counts, newest (since, member) pairs,
        newest first, up to cap + 1 of them)."""
        calls = []
        for user_id, side, at, counts, pairs in lists:
            hot, rest = pairs[: self._cap], pairs[self._cap : self._cap + 1]
            boundary = rest[0] if rest else (-1, "")
            args: list[Any] = [side.value, at, *counts.values(), self._cap, *boundary]
            for since, member in hot:
                args += (since, member)
            calls.append((self._side_keys(user_id, side), args))
        await self._run_many(self._install, calls)

    # -- statuses -----------------------------------------------------------------------------

    async def set_status(self, user_id: str, inactive: bool, version: int) -> None:
        """Mirror a committed status change (the newest version wins)."""
        keys = [self._inactive, self._status_versions]
        await self._status(keys=keys, args=[user_id, int(inactive), version])

    async def force_status(self, user_id: str, inactive: bool, version: int) -> None:
        """Set a user's mirrored status from Neo4j whatever version the mirror holds (repairs)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._status_versions, user_id, version)
            if inactive:
                pipe.sadd(self._inactive, user_id)
            else:
                pipe.srem(self._inactive, user_id)
            await pipe.execute()

    async def load_statuses(self, inactive: Sequence[tuple[str, int]]) -> None:
        """Build the inactive set from Neo4j's inactive users (and their status versions)."""
        keys = [self._inactive, self._status_versions]
        await self._run_many(self._status, [(keys, [uid, 1, v]) for uid, v in inactive])

    async def mark_statuses_built(self) -> None:
        await self._redis.sadd(self._inactive, "")

    async def inactive_among(self, user_ids: Sequence[str]) -> set[str] | None:
        """Which of these users are inactive; None when the set is not built (lost or new)."""
        flags = await self._redis.smismember(self._inactive, [*user_ids, ""])
        if not flags[-1]:
            return None
        return {uid for uid, flag in zip(user_ids, flags, strict=False) if flag}

    async def _run_many(
        self, script: AsyncScript, calls: list[tuple[list[str], list[Any]]]
    ) -> None:
        """Run one script for many users in one pipeline. Large batches (bulk loads) are
        packed by hiredis in C and written on one connection: Python packing was most of
        the time of a mirror rebuild. A cluster has no single connection: there, batches of
        1,000 calls go as cluster pipelines (one pipeline per node, in parallel)."""
        if pack_command is None or len(calls) < 256 or self._cluster:
            for start in range(0, len(calls), 1_000):
                batch = Batch(self._redis)
                for keys, args in calls[start : start + 1_000]:
                    batch.script(script, keys, args)
                await batch.execute()
            return
        sha = await self._redis.script_load(script.script)
        pool = self._redis.connection_pool
        connection = await pool.get_connection()
        try:
            for start in range(0, len(calls), 1_000):
                chunk = calls[start : start + 1_000]
                await connection.send_packed_command(b"".join(
                    pack_command(("EVALSHA", sha, len(keys), *keys, *args)) for keys, args in chunk
                ))  # fmt: skip
                first_error: Exception | None = None
                for _ in chunk:  # every reply is read, as a pipeline would, before raising
                    try:
                        await connection.read_response()
                    except ResponseError as exc:
                        first_error = first_error or exc
                if first_error is not None:
                    raise first_error
        except BaseException:
            await connection.disconnect()  # unread replies would confuse the next user
            raise
        finally:
            await pool.release(connection)

    async def drop(self, user_ids: Iterable[str]) -> None:
        """Forget users' counts and lists; their next read rebuilds them from Neo4j.

        The journal stays: writes in flight while the user is rebuilt are replayed from it.
        A floor stays too: a snapshot read before the drop is refused (see ``lua/drop.lua``).
        """
        calls = [(self.keys(user_id)[:3], []) for user_id in user_ids]
        await self._run_many(self._drop, calls)

    async def expire(self, user_id: str, seconds: int) -> None:
        """Let an erased user's counts and lists go after ``seconds`` (they are exact zeros
        now; keeping them that long beats a late rebuild that read the user before it went)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in self.keys(user_id)[:3]:
                pipe.expire(key, seconds)
            await pipe.execute()

    async def clear(self) -> int:
        """Remove every mirror key (all users); returns how many keys went."""
        removed = 0
        batch: list[str] = []
        async for key in self._redis.scan_iter(match=f"{self._prefix}*", count=10_000):
            batch.append(key)
            if len(batch) >= 10_000:
                removed += await self._redis.unlink(*batch)
                batch.clear()
        if batch:
            removed += await self._redis.unlink(*batch)
        return removed

    # -- reads --------------------------------------------------------------------------------

    async def counts(self, user_id: str) -> Counts | None:
        """Exact counts in one O(1) round trip; None when the user is cold."""
        values = await self._redis.hmget(self._key("m", user_id), *COUNT_FIELDS)
        if any(value is None for value in values):
            return None
        return Counts(*map(int, values))

    async def page(
        self, user_id: str, side: Side, after: Position | None, wanted: int
    ) -> HotPage | None:
        """Up to ``wanted`` active entries strictly after ``after``; None when the list is
        cold. Raises StatusesMissing when the inactive set must be built first."""
        if self._split_page:
            return await self._page_then_filter(user_id, side, after, wanted)
        keys = [*self._side_keys(user_id, side)[:2], self._inactive]
        reply = await self._page(keys=keys, args=self._page_args(side, after, wanted))
        if reply[0] == 0:
            return None
        if reply[0] == 2:
            raise StatusesMissing
        return HotPage(self._entries(reply[2:]), truncated=bool(reply[1]))

    @staticmethod
    def _page_args(side: Side, after: Position | None, count: int) -> list[Any]:
        return [side.value, after.since if after else "+inf", after.user_id if after else "", count]

    @staticmethod
    def _entries(flat: Sequence[Any]) -> list[Entry]:
        return [Entry(flat[i], _micros(flat[i + 1])) for i in range(0, len(flat), 2)]

    async def _page_then_filter(
        self, user_id: str, side: Side, after: Position | None, wanted: int
    ) -> HotPage | None:
        """The cluster's page: raw entries from the user's slot, then which of them are
        inactive from the {status} slot; scanned on past inactive ones, as the script does."""
        keys = self._side_keys(user_id, side)[:2]
        found: list[Entry] = []
        cursor, ask = after, wanted
        while True:
            reply = await self._page(keys=keys, args=self._page_args(side, cursor, ask))
            if reply[0] == 0:
                return None
            raw = self._entries(reply[2:])
            hidden = await self.inactive_among([e.user_id for e in raw])
            if hidden is None:
                raise StatusesMissing
            found += [e for e in raw if e.user_id not in hidden][: wanted - len(found)]
            if len(found) >= wanted or len(raw) < ask:
                return HotPage(found, truncated=bool(reply[1]))
            cursor, ask = raw[-1].position, max(2 * (wanted - len(found)), 32)

    async def dump(self, user_id: str) -> MirroredUser:
        """The raw mirrored state of one user, for consistency checks and debugging."""
        (mirrored,) = await self.dump_many([user_id])
        return mirrored

    async def dump_many(self, user_ids: Sequence[str]) -> list[MirroredUser]:
        """The raw mirrored state of many users, in one pipelined round trip."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for user_id in user_ids:
                pipe.hgetall(self._key("m", user_id))
                for side in Side:
                    pipe.zrange(self._key(side.value, user_id), 0, -1, desc=True, withscores=True)
            replies = await pipe.execute()
        return [
            self._mirrored(replies[3 * n], replies[3 * n + 1 : 3 * n + 3])
            for n in range(len(user_ids))
        ]

    @staticmethod
    def _mirrored(meta: dict[str, str], lists: list[list[tuple[str, float]]]) -> MirroredUser:
        present = all(name in meta for name in COUNT_FIELDS)
        counts = Counts(*(int(meta[name]) for name in COUNT_FIELDS)) if present else None
        state: dict[Side, tuple[list[Entry], Position | None] | None] = {}
        for side, members in zip(Side, lists, strict=True):
            bound = _micros(meta.get(f"{side.value}b", "-1"))
            count = int(meta.get("fr" if side is Side.FOLLOWERS else "fg", "0"))
            lost = bound < 0 and count > 0 and not members  # served as cold, as list_state does
            if f"{side.value}s" not in meta or lost:
                state[side] = None
                continue
            boundary = Position(bound, meta.get(f"{side.value}m", "")) if bound >= 0 else None
            state[side] = ([Entry(m, _micros(s)) for m, s in members], boundary)
        return MirroredUser(counts, state)
