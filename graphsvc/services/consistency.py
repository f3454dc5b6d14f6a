"""Compare the Redis mirror with Neo4j, user by user, and repair what drifted.

The rules are the mirror's invariants: mirrored counts equal Neo4j's counts (totals, active
counts and friends); the set of inactive users agrees with Neo4j's statuses; a complete hot
list equals the user's whole list; a truncated hot list equals exactly the entries newer than
its boundary; the mutes in effect in a user's mute mirror are those Neo4j holds; a user's
mirrored privacy settings are those on its node. A cold (absent) mirror is never drift: it is
rebuilt on the next read.

A repair rebuilds the drifted users' counts and lists from a Neo4j snapshot (keeping their
journals, so writes in flight are replayed) and writes their status to the mirror again, as
Neo4j says it, their mute mirrors from Neo4j's mutes and their privacy settings from their
nodes (whatever version the mirror holds).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from graphsvc.adapters.neo4j.mutes import MuteStore
from graphsvc.adapters.neo4j.privacy import PrivacyStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.redis.leases import Leases
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.mirror_state import MirrorState
from graphsvc.adapters.redis.mutes import MuteMirror
from graphsvc.adapters.redis.privacy import PrivacyMirror, PrivacyMissing
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.domain.drift import Drift
from graphsvc.domain.model import Counts, Entry, Side
from graphsvc.domain.mutes import MirroredMute

__all__ = ["Consistency", "Drift"]


class Repairs(Protocol):
    async def repair(self, user_ids: Sequence[str]) -> None: ...


class Consistency:
    """The check and the repair of the mirror the operators and the worker's rounds run;
    ``repairs``: the services that rebuild their part of the mirror from Neo4j;
    ``batch_users``: REBUILD_BATCH_USERS, the users a periodic round checks at a time."""

    def __init__(
        self,
        truth: tuple[SnapshotStore, MuteStore, PrivacyStore],
        mirror: tuple[MirrorState, StatusSet, MuteMirror, PrivacyMirror],
        written: Mirror,
        leases: Leases,
        repairs: Sequence[Repairs],
        batch_users: int,
    ) -> None:
        self._snapshots, self._mute_store, self._privacy_store = truth
        self._state, self._statuses, self._mute_mirror, self._privacy_mirror = mirror
        self._written = written
        self._leases = leases
        self._repairs = repairs
        self.batch_users = batch_users

    async def check(self, user_ids: Sequence[str]) -> list[Drift]:
        """Every difference between the mirror and Neo4j for these users (empty: consistent)."""
        drifts = await compare(self._snapshots, self._state, self._statuses, user_ids)
        drifts += await compare_mutes(self._mute_store, self._mute_mirror, user_ids)
        return drifts + await compare_privacy(self._privacy_store, self._privacy_mirror, user_ids)

    async def repair(self, user_ids: Sequence[str]) -> None:
        for part in self._repairs:
            await part.repair(user_ids)

    async def written_since(self, seconds_ago: float) -> list[str]:
        """The users written in that window, a periodic round's to check."""
        return sorted(await self._written.written_since(seconds_ago))

    async def forget_written_before(self, seconds_ago: float) -> None:
        await self._written.forget_written_before(seconds_ago)

    async def take_round(self, seconds: float) -> bool:
        """The period's round, for one worker of however many run (the lease lapses)."""
        return bool(await self._leases.take("reconcile", seconds))


def _pairs(entries: Sequence[Entry]) -> list[tuple[str, int]]:
    return [(e.user_id, e.since) for e in entries]


async def compare_privacy(
    store: PrivacyStore, mirror: PrivacyMirror, user_ids: Sequence[str]
) -> list[Drift]:
    """Each user's privacy settings as the mirror has them and as Neo4j has them (a hash not
    built is never drift: it is built before its next read)."""
    try:
        found = await mirror.of(user_ids)
    except PrivacyMissing:
        return []
    truth = await store.of(user_ids)
    return [
        Drift(uid, "privacy", truth[uid][0].encode(), found[uid].encode())
        for uid in user_ids
        if found[uid] != truth[uid][0]
    ]


async def compare_mutes(
    store: MuteStore, mirror: MuteMirror, user_ids: Sequence[str]
) -> list[Drift]:
    """The mutes in effect now, as the mirror has them and as Neo4j has them (target ->
    expiry and notifications). A hash not built is never drift: it is built on its next read;
    expired entries filter nothing, so neither side's count."""
    now = time.time_ns() // 1_000
    truth = {snap.user_id: snap.entries for snap in await store.snapshots(user_ids, now)}
    drifts: list[Drift] = []
    for uid in user_ids:
        mirrored = await mirror.dump(uid)
        if mirrored is None:
            continue
        found = {t: (m.until, m.notifications) for t, m in mirrored[1].items() if m.in_effect(now)}
        expected = {
            t: (m.until, m.notifications)
            for t, m in ((t, MirroredMute.decode(e)) for t, e in truth.get(uid, {}).items())
        }
        if found != expected:
            drifts.append(
                Drift(uid, "mutes", sorted(expected.items())[:5], sorted(found.items())[:5])
            )
    return drifts


async def compare(
    snapshots: SnapshotStore, state: MirrorState, statuses: StatusSet, user_ids: Sequence[str]
) -> list[Drift]:
    mirrored = dict(zip(user_ids, await state.dump_many(user_ids), strict=True))
    inactive = await statuses.inactive_among(user_ids)  # None: not built, nothing to compare
    longest = max(
        (len(hot[0]) for m in mirrored.values() for hot in m.lists.values() if hot),
        default=0,
    )
    # One entry more than the longest hot list is enough to see a missing or extra entry.
    truth = await snapshots.snapshots(
        list(user_ids), followers_limit=longest + 1, following_limit=longest + 1
    )
    drifts: list[Drift] = []
    for uid in user_ids:
        mine, snap = mirrored[uid], truth.get(uid)
        if snap is None:
            if inactive and uid in inactive:
                drifts.append(Drift(uid, "unknown user is marked inactive", None, True))
            if mine.counts not in (None, Counts.zero()) or any(
                s and s[0] for s in mine.lists.values()
            ):
                drifts.append(Drift(uid, "mirrored user is unknown to Neo4j", None, mine.counts))
            continue
        expected = snap.totals
        if inactive is not None and (uid in inactive) != snap.inactive:
            drifts.append(Drift(uid, "inactive", snap.inactive, uid in inactive))
        if mine.counts is not None and mine.counts != expected:
            drifts.append(Drift(uid, "counts", expected, mine.counts))
        for side in Side:
            hot = mine.lists[side]
            if hot is None:
                continue
            entries, boundary = hot
            # Lists run newest first, i.e. by (since, user_id) descending.
            should = [
                e
                for e in snap.entries(side)
                if boundary is None or (e.since, e.user_id) > (boundary.since, boundary.user_id)
            ]
            if _pairs(should) != _pairs(entries):
                what = f"{side.label} list" + (" above its boundary" if boundary else "")
                drifts.append(Drift(uid, what, _pairs(should)[:5], _pairs(entries)[:5]))
    return drifts
