"""Redis adapter: the mirror of hot follower/following lists and exact counts.

Per user ``u`` (every key carries the hash tag ``{u}``, so one user's keys share a cluster slot):

- ``<prefix>m:{u}``  hash: exact counts, when Neo4j read them, and per-list build state
- ``<prefix>r:{u}``  sorted set of followers, score = follow time (microseconds), newest N kept
- ``<prefix>g:{u}``  sorted set of followings, same shape
- ``<prefix>j:{u}``  short-lived journal of removals (and of additions while a list is cold)
- ``<prefix>t:{u}``  when Neo4j stamped each journal entry (``lua/common.lua``)

and ``<prefix>recent`` (user -> when its mirror was last written, for reconcile rounds). The
inactive users that pages leave out are in ``statuses.StatusSet``.

All logic that must be atomic lives in the Lua scripts beside this file (``lua/``); each script
touches one user's keys only. The protocol is described in ``lua/common.lua``.

Three parts write or read these keys, each for its own callers: ``Mirror`` (here) mirrors what
Neo4j committed (the write order's edge changes, a status propagation's counts, an erasure's
expiry), ``MirrorBuilds`` (``mirror_builds.py``) installs users from Neo4j snapshots and drops
them, and ``MirrorReads`` (``mirror_reads.py``) answers the request path's counts and pages.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from redis.exceptions import NoScriptError

from graphsvc.adapters.redis.client import Batch, Client, Command, is_cluster, queued
from graphsvc.adapters.redis.multiplexed import Multiplexed
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.domain.model import CountChange, CountUpdate, EdgeChange, Side, UserCounts
from graphsvc.settings import MirrorSettings, RedisSettings

# The meta hash's count fields, in the order of Counts.values().
COUNT_FIELDS = ("fr", "fg", "fa", "ga", "mu")
GAP = 2  # lua/common.lua's apply_change: a numbered change parked behind a missing one


def _count_args(counts: CountUpdate) -> list[Any]:
    """How a half of an edge change moves the user's counts, as lua/edge.lua takes it."""
    match counts:
        case CountChange(cs, delta):
            return ["d", cs, *delta.values()]
        case UserCounts(_, values, cs):
            return ["a", cs, *values.values()]
    return ["n", 0, 0, 0, 0, 0, 0]


HALVES_PER_CALL = 64  # halves one edges.lua call applies


def _gaps(users: Sequence[str], replies: Sequence[Any]) -> set[str]:
    return {user for user, reply in zip(users, replies, strict=True) if int(reply[1]) == GAP}


def micros(score: str | float) -> int:
    """A sorted-set score back to integer microseconds (exact below 2**53)."""
    return int(float(score))


class Mirror:
    def __init__(
        self,
        client: Client,
        redis: RedisSettings,
        settings: MirrorSettings,
        multiplexed: Multiplexed | None = None,
    ) -> None:
        """``multiplexed``: the connections the write path's batches go on, where there are
        (a single Redis); else redis-py's pipelines, per user (a cluster, TLS)."""
        self._redis = client
        self._multiplexed = multiplexed
        self._cluster = is_cluster(client)
        self.prefix = redis.redis_prefix
        self._cap = settings.hot_list_cap
        self._window_us = settings.mirror_journal_seconds * 1_000_000
        self._edge = register(client, "edge")
        self._edges = register(client, "edges")
        self._refresh_counts = register(client, "refresh_counts")
        self._recent = f"{self.prefix}recent"

    @property
    def client(self) -> Client:
        return self._redis

    def key(self, kind: str, user_id: str) -> str:
        return f"{self.prefix}{kind}:{{{user_id}}}"

    def keys(self, user_id: str) -> list[str]:
        """All of one user's keys: meta, followers, following, journal, journal stamps."""
        return [self.key(kind, user_id) for kind in ("m", "r", "g", "j", "t")]

    def side_keys(self, user_id: str, side: Side) -> list[str]:
        """One list's keys, as the list scripts take them: meta, the list, journal, stamps."""
        return [self.key(kind, user_id) for kind in ("m", side.value, "j", "t")]

    async def ping(self) -> None:
        await self._redis.ping()

    # -- writes -------------------------------------------------------------------------------

    async def apply_many(
        self,
        changes: Sequence[EdgeChange],
        *,
        alongside: Sequence[Command] = (),
        after: Sequence[Command] = (),
    ) -> set[str]:
        """Mirror committed edge changes (two halves each, one per user) and note the users
        as recently written (for `graphsvc reconcile --every`), in one round trip. Returns
        the users whose counts wait behind a gap: a numbered change before this one has not
        reached them (it is late, or lost); their counts must be read anew
        (``lua/common.lua``).

        ``alongside``: more commands for the same round trip (suggestion-cache
        invalidations). ``after``: commands that must run only once the mirror write did (the
        change's events and their acks). On a single Redis everything goes as one pipeline on
        one connection, which Redis runs in order, the halves as few ``edges.lua`` calls;
        after an error reply (OOM, READONLY) it raises, and the caller withdraws the acks.
        A Redis that lost the script since the connection loaded it (SCRIPT FLUSH) has run
        ``after`` without the halves: they are sent again at once, and the events stand. On
        a cluster each half is its own ``edge.lua`` call, and ``after`` goes in a second
        round trip, where it lives on another node.
        """
        halves = self._halves(changes)
        users = [user for user, _, _ in halves]
        recent: list[Command] = []
        if users:
            now = time.time()
            written = dict.fromkeys(users)  # once each, as a user may have several halves
            recent = [("ZADD", self._recent, *(x for u in written for x in (now, u)))]
        if self._multiplexed is not None:
            return await self._apply_pipelined(halves, [*recent, *alongside, *after])
        calls = [(keys, args) for _, keys, args in halves]
        gaps: set[str] = set()
        if len(calls) >= 256:
            gaps = _gaps(users, await run_many(self._redis, self._edge, calls))
            calls = []
        batch = Batch(self._redis)
        for keys, args in calls:
            batch.script(self._edge, keys, args)
        batch.call(queued([*recent, *alongside]))
        if not self._cluster:
            batch.call(queued(after))
            after = ()
        replies = await batch.execute()
        if calls:
            gaps |= _gaps(users, replies[: len(calls)])
        if after:  # on a cluster, another node: only once the mirror write is done
            second = Batch(self._redis)
            second.call(queued(after))
            await second.execute()
        return gaps

    def _halves(self, changes: Sequence[EdgeChange]) -> list[tuple[str, list[str], list[Any]]]:
        """Each change's two halves: (user, its keys, the arguments of ``mirror_half``)."""
        halves = []
        for change in changes:
            op = "+" if change.following else "-"
            rings = change.following and change.options.notify
            for user, side, member, counts in (
                (change.src, Side.FOLLOWING, change.dst, change.src_counts),
                (change.dst, Side.FOLLOWERS, change.src, change.dst_counts),
            ):
                bell = secrets.token_hex(8) if rings and side is Side.FOLLOWERS else ""
                args = [side.value, op, member, change.version, change.at, *_count_args(counts)]
                halves.append(
                    (user, self.side_keys(user, side), [*args, self._cap, self._window_us, bell])
                )
        return halves

    async def _apply_pipelined(
        self, halves: list[tuple[str, list[str], list[Any]]], then: list[Command]
    ) -> set[str]:
        """The halves as ``edges.lua`` calls of at most HALVES_PER_CALL (a call blocks Redis
        while it runs), then ``then``, in one write on one connection."""
        assert self._multiplexed is not None
        commands: list[Command] = []
        for start in range(0, len(halves), HALVES_PER_CALL):
            chunk = halves[start : start + HALVES_PER_CALL]
            keys = [key for _, keys, _ in chunk for key in keys]
            args = [arg for _, _, args in chunk for arg in args]
            commands.append(("EVALSHA", self._edges.sha, len(keys), *keys, *args))
        multiplexed = self._multiplexed
        replies = await multiplexed.pipeline([*commands, *then], scripts=[self._edges])
        if any(isinstance(reply, NoScriptError) for reply in replies[: len(commands)]):
            # Redis lost its scripts (SCRIPT FLUSH) since this connection loaded them; the
            # halves are idempotent, and go once more once loaded.
            replies[: len(commands)] = await multiplexed.pipeline(commands, scripts=[self._edges])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        answers = [answer for reply in replies[: len(commands)] for answer in reply]
        users = [user for user, _, _ in halves]
        return {user for user, answer in zip(users, answers, strict=True) if int(answer) == GAP}

    async def written_since(self, seconds_ago: float) -> list[str]:
        """Users whose mirror was written in the last ``seconds_ago`` seconds."""
        return await self._redis.zrange(
            self._recent, time.time() - seconds_ago, "+inf", byscore=True
        )

    async def forget_written_before(self, seconds_ago: float) -> None:
        await self._redis.zremrangebyscore(self._recent, "-inf", time.time() - seconds_ago)

    async def refresh_counts(self, readings: Mapping[str, UserCounts]) -> None:
        """Counts read under the users' locks after a change that numbered none, for users it
        did not write through an edge change (status propagations), and to close a gap."""
        calls = [
            ([self.key("m", user_id)], [reading.at, reading.cs, *reading.counts.values()])
            for user_id, reading in readings.items()
        ]
        await run_many(self._redis, self._refresh_counts, calls)

    async def expire(self, user_id: str, seconds: int) -> None:
        """Let an erased user's counts and lists go after ``seconds`` (they are exact zeros
        now; keeping them that long beats a late rebuild that read the user before it went)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in self.keys(user_id)[:3]:
                pipe.expire(key, seconds)
            await pipe.execute()
