"""Builds of the mirror from Neo4j (``mirror.py`` describes its keys): users installed from
snapshots (a cold read, a rebuild, a repair, a bulk load) and users dropped, so that their
next read builds them again.

A build may land after writes it did not see, or after a later drop: a list's install replays
the user's journal over the snapshot, and an install refuses a snapshot read before the user's
last drop (its floor). A bulk load's install has neither to weigh (``install_loaded``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.domain.model import Counts, Side, Snapshot, UserCounts
from graphsvc.settings import MirrorSettings

# How long a dropped user with nothing mirrored keeps its floor: far longer than any snapshot
# read takes from Neo4j to Redis, so every one read before the floor is refused.
FLOOR_ONLY_SECONDS = 3_600


class MirrorBuilds:
    def __init__(self, mirror: Mirror, settings: MirrorSettings) -> None:
        self._mirror = mirror
        self._redis = mirror.client
        self._cap = settings.hot_list_cap
        self._install = register(mirror.client, "install")
        self._install_counts = register(mirror.client, "install_counts")
        self._install_loaded = register(mirror.client, "install_loaded")
        self._drop = register(mirror.client, "drop")

    async def install(self, snapshots: Iterable[Snapshot], sides: Sequence[Side]) -> set[str]:
        """Build the given lists (and counts) from Neo4j snapshots, pipelined. Returns the
        users a list was not installed for: a snapshot older than the user's floor
        (``drop``), or a list that is loaded already."""
        if not sides:
            calls = [
                ([self._mirror.key("m", snap.user_id)], [snap.at, snap.cs, *snap.totals.values()])
                for snap in snapshots
            ]
            await run_many(self._redis, self._install_counts, calls)
            return set()
        lists = [
            (
                snap.user_id,
                side,
                snap.reading,
                [(e.since, e.user_id) for e in snap.entries(side)],
            )
            for snap in snapshots
            for side in sides
        ]
        return await self.install_lists(lists)

    async def install_lists(
        self, lists: Iterable[tuple[str, Side, UserCounts, Sequence[tuple[int, str]]]]
    ) -> set[str]:
        """Install lists given as (user, side, the counts' reading, newest (since, member)
        pairs, newest first, up to cap + 1 of them); the users a list was not installed for."""
        calls = []
        users: list[str] = []
        for user_id, side, reading, pairs in lists:
            hot, rest = pairs[: self._cap], pairs[self._cap : self._cap + 1]
            boundary = rest[0] if rest else (-1, "")
            args: list[Any] = [
                side.value,
                reading.at,
                reading.cs,
                *reading.counts.values(),
                self._cap,
                *boundary,
            ]
            for since, member in hot:
                args += (since, member)
            calls.append((self._mirror.side_keys(user_id, side), args))
            users.append(user_id)
        replies = await run_many(self._redis, self._install, calls)
        return {user for user, installed in zip(users, replies, strict=True) if not int(installed)}

    async def install_loaded(
        self,
        users: Iterable[tuple[str, int, Counts, Sequence[Any], Sequence[Any]]],
    ) -> None:
        """Install users of a bulk load into an empty database, only right after ``clear``
        while Neo4j accepts no writes (every user's count sequence is 0 there): (user, read
        at, counts, followers, following), each
        side given as its boundary score and member ((-1, "") when complete), the number of
        entries and the entries up to the cap, newest first (since, member, since, ...)."""
        calls = [
            (
                [
                    self._mirror.key("m", uid),
                    self._mirror.key("r", uid),
                    self._mirror.key("g", uid),
                ],
                [at, 0, *counts.values(), *followers, *following],
            )
            for uid, at, counts, followers, following in users
        ]
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
        calls = [(self._mirror.keys(user_id)[:3], [floor, FLOOR_ONLY_SECONDS]) for user_id in ids]
        replies = await run_many(self._redis, self._drop, calls)
        return [user_id for user_id, had in zip(ids, replies, strict=True) if int(had)]

    async def clear(self) -> int:
        """Remove every mirror key (all users); returns how many keys went."""
        removed = 0
        batch: list[str] = []
        async for key in self._redis.scan_iter(match=f"{self._mirror.prefix}*", count=10_000):
            batch.append(key)
            if len(batch) >= 10_000:
                removed += await self._redis.unlink(*batch)
                batch.clear()
        if batch:
            removed += await self._redis.unlink(*batch)
        return removed
