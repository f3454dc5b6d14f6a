"""Compare the Redis mirror with Neo4j, user by user.

The rules are the mirror's invariants: mirrored counts equal Neo4j's counts (totals, active
counts and friends); the set of inactive users agrees with Neo4j's statuses; a complete hot
list equals the user's whole list; a truncated hot list equals exactly the entries newer than
its boundary; the mutes in effect in a user's mute mirror are those Neo4j holds; a user's
mirrored privacy settings are those on its node. A cold (absent) mirror is never drift: it is
rebuilt on the next read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from graphsvc.adapters.neo4j.mutes import MuteStore
from graphsvc.adapters.neo4j.privacy import PrivacyStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.redis.mirror_state import MirrorState
from graphsvc.adapters.redis.mutes import MuteMirror
from graphsvc.adapters.redis.privacy import PrivacyMirror, PrivacyMissing
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.builders.core import Core
from graphsvc.domain.model import Counts, Entry, Side
from graphsvc.domain.mutes import MirroredMute


@dataclass(frozen=True, slots=True)
class Drift:
    user_id: str
    what: str
    expected: object
    found: object

    def __str__(self) -> str:
        return (
            f"{self.user_id}: {self.what}: Neo4j says {self.expected!r}, Redis has {self.found!r}"
        )


def _pairs(entries: Sequence[Entry]) -> list[tuple[str, int]]:
    return [(e.user_id, e.since) for e in entries]


async def check_users(core: Core, user_ids: Sequence[str]) -> list[Drift]:
    """Every difference between the mirror and Neo4j for these users (empty: consistent)."""
    drifts = await compare(
        core.neo4j.snapshots, core.redis.mirror_state, core.redis.statuses, user_ids
    )
    drifts += await compare_mutes(core.neo4j.mutes, core.redis.mutes, user_ids)
    return drifts + await compare_privacy(core.neo4j.privacy, core.redis.privacy, user_ids)


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
        (len(state[0]) for m in mirrored.values() for state in m.lists.values() if state),
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
            state = mine.lists[side]
            if state is None:
                continue
            entries, boundary = state
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
