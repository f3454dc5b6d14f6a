"""Redis adapter: the mirror of hot follower/following lists and exact counts.

Per user ``u`` (every key carries the hash tag ``{u}``, so one user's keys share a cluster slot):

- ``<prefix>m:{u}``  hash: exact counts, when Neo4j read them, and per-list build state
- ``<prefix>r:{u}``  sorted set of followers, score = follow time (microseconds), newest N kept
- ``<prefix>g:{u}``  sorted set of followings, same shape
- ``<prefix>j:{u}``  short-lived journal of removals (and of additions while a list is cold)
- ``<prefix>t:{u}``  when Neo4j stamped each journal entry (read after its commit)

and ``<prefix>recent`` (user -> when its mirror was last written, for reconcile rounds). The
inactive users that pages leave out are in ``statuses.StatusSet``.

All logic that must be atomic lives in the Lua scripts beside this file (``lua/``); each script
touches one user's keys only. The protocol is described in
``lua/common.lua``. On a single Redis a page is one script that also filters out inactive users;
on a Redis Cluster the inactive set lives in another slot, so the page script returns the raw
entries and the filter is a second round trip (SMISMEMBER).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.redis.client import Batch, Client, is_cluster
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.adapters.redis.statuses import StatusesMissing, StatusSet
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Counts, EdgeChange, Entry, Side, Snapshot, UserCounts
from graphsvc.settings import MirrorSettings, RedisSettings

# How long a dropped user with nothing mirrored keeps its floor: far longer than any snapshot
# read takes from Neo4j to Redis, so every one read before the floor is refused.
FLOOR_ONLY_SECONDS = 3_600

# Queues commands on a pipeline the mirror runs (``lambda pipe: pipe.xadd(...)``).
Queue = Callable[[Any], None]
# The meta hash's count fields, in the order of Counts.values().
COUNT_FIELDS = ("fr", "fg", "fa", "ga", "mu")


def micros(score: str | float) -> int:
    """A sorted-set score back to integer microseconds (exact below 2**53)."""
    return int(float(score))


@dataclass(frozen=True, slots=True)
class HotPage:
    """Entries served by the hot list; ``truncated`` means older entries live only in Neo4j."""

    entries: list[Entry]
    truncated: bool


class Mirror:
    def __init__(
        self,
        client: Client,
        statuses: StatusSet,
        redis: RedisSettings,
        settings: MirrorSettings,
        *,
        split_page: bool | None = None,
    ) -> None:
        """``split_page``: filter pages in a second round trip (default: on a cluster only,
        where it must; tests also run it on a single Redis)."""
        self._redis = client
        self._statuses = statuses
        self._cluster = is_cluster(client)
        self._split_page = self._cluster if split_page is None else split_page
        self._prefix = redis.redis_prefix
        self._cap = settings.hot_list_cap
        self._window_us = settings.mirror_journal_seconds * 1_000_000
        self._edge = register(client, "edge")
        self._install = register(client, "install")
        self._install_counts = register(client, "install_counts")
        self._install_loaded = register(client, "install_loaded")
        self._page = register(client, "page")
        self._refresh_counts = register(client, "refresh_counts")
        self._drop = register(client, "drop")
        self._recent = f"{self._prefix}recent"

    @property
    def client(self) -> Client:
        return self._redis

    def key(self, kind: str, user_id: str) -> str:
        return f"{self._prefix}{kind}:{{{user_id}}}"

    def keys(self, user_id: str) -> list[str]:
        """All of one user's keys: meta, followers, following, journal, journal stamps."""
        return [self.key(kind, user_id) for kind in ("m", "r", "g", "j", "t")]

    def _side_keys(self, user_id: str, side: Side) -> list[str]:
        return [self.key(kind, user_id) for kind in ("m", side.value, "j", "t")]

    async def ping(self) -> None:
        await self._redis.ping()

    # -- writes -------------------------------------------------------------------------------

    async def apply_many(
        self,
        changes: Sequence[EdgeChange],
        *,
        alongside: Queue | None = None,
        after: Queue | None = None,
    ) -> None:
        """Mirror committed edge changes, each as two single-user scripts, pipelined, and note
        the users as recently written (for `graphsvc reconcile --every`).

        ``alongside`` queues more commands for the same round trip (suggestion-cache
        invalidations). ``after`` queues commands that must run only once the mirror write did
        (the change's events and their acks): on the same pipeline, after it, on a single
        Redis, which runs a pipeline in order, so an outage or a refused write (OOM, READONLY)
        stops both; in a second round trip on a cluster, where they live on another node.
        """
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
            await run_many(self._redis, self._edge, calls)
            calls = []
        batch = Batch(self._redis)
        for keys, args in calls:
            batch.script(self._edge, keys, args)
        if touched:
            recent = dict.fromkeys(touched, time.time())
            batch.call(lambda pipe: pipe.zadd(self._recent, recent))
        if alongside is not None:
            batch.call(alongside)
        if after is not None and not self._cluster:
            batch.call(after)
            after = None
        await batch.execute()
        if after is not None:  # on a cluster, another node: only once the mirror write is done
            second = Batch(self._redis)
            second.call(after)
            await second.execute()

    async def written_since(self, seconds_ago: float) -> list[str]:
        """Users whose mirror was written in the last ``seconds_ago`` seconds."""
        return await self._redis.zrange(
            self._recent, time.time() - seconds_ago, "+inf", byscore=True
        )

    async def forget_written_before(self, seconds_ago: float) -> None:
        await self._redis.zremrangebyscore(self._recent, "-inf", time.time() - seconds_ago)

    async def refresh_counts(self, readings: Mapping[str, UserCounts]) -> None:
        """Counts read after a commit that changed them, for users the commit did not write
        through an edge change (status propagations)."""
        calls = [([self.key("m", user_id)], [reading.at, *reading.counts.values()])
                 for user_id, reading in readings.items()]  # fmt: skip
        await run_many(self._redis, self._refresh_counts, calls)

    async def install(self, snapshots: Iterable[Snapshot], sides: Sequence[Side]) -> None:
        """Build the given lists (and counts) from Neo4j snapshots, pipelined."""
        if not sides:
            calls = [([self.key("m", snap.user_id)], [snap.at, *snap.totals.values()])
                     for snap in snapshots]  # fmt: skip
            await run_many(self._redis, self._install_counts, calls)
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
        await run_many(self._redis, self._install, calls)

    async def install_loaded(
        self,
        users: Iterable[tuple[str, int, Counts, Sequence[Any], Sequence[Any]]],
    ) -> None:
        """Install users of a bulk load into an empty database, only right after ``clear``
        while Neo4j accepts no writes: (user, read at, counts, followers, following), each
        side given as its boundary score and member ((-1, "") when complete), the number of
        entries and the entries up to the cap, newest first (since, member, since, ...)."""
        calls = [([self.key("m", uid), self.key("r", uid), self.key("g", uid)],
                  [at, *counts.values(), *followers, *following])
                 for uid, at, counts, followers, following in users]  # fmt: skip
        await run_many(self._redis, self._install_loaded, calls)

    async def drop(self, user_ids: Iterable[str], *, floor: int = 0) -> list[str]:
        """Forget users' counts and lists; their next read rebuilds them from Neo4j. Returns
        the users that had counts or a list mirrored.

        The journal stays: writes in flight while the user is rebuilt are replayed from it.
        A floor stays too: a snapshot read before the drop, or before ``floor`` (a Neo4j time),
        is refused (see ``lua/drop.lua``); on a user with nothing mirrored, only for
        FLOOR_ONLY_SECONDS.
        """
        ids = list(user_ids)
        calls = [(self.keys(user_id)[:3], [floor, FLOOR_ONLY_SECONDS]) for user_id in ids]
        replies = await run_many(self._redis, self._drop, calls)
        return [user_id for user_id, had in zip(ids, replies, strict=True) if int(had)]

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
        values = await self._redis.hmget(self.key("m", user_id), *COUNT_FIELDS)
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
        keys = [*self._side_keys(user_id, side)[:2], self._statuses.inactive_key]
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
        return [Entry(flat[i], micros(flat[i + 1])) for i in range(0, len(flat), 2)]

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
            hidden = await self._statuses.inactive_among([e.user_id for e in raw])
            if hidden is None:
                raise StatusesMissing
            found += [e for e in raw if e.user_id not in hidden][: wanted - len(found)]
            if len(found) >= wanted or len(raw) < ask:
                return HotPage(found, truncated=bool(reply[1]))
            cursor, ask = raw[-1].position, max(2 * (wanted - len(found)), 32)
