"""Trending and popular accounts: how graph events count towards them, and how the charts rank.

Trending is the net number of followers an account gained within the last
COLD_START_TRENDING_HOURS: each follow adds one to its target, each unfollow takes one away, in the
hourly bucket of the event's own time (its ``version``, µs), never the time it was counted, so
an event delivered twice lands in the same bucket and an event older than the window counts
nowhere. Only the followed side gains: an account that follows many others never trends for
it. Popular is the most followed. Both charts keep only active, discoverable accounts that
show their counts (a place in a chart ranked by counts would bracket a hidden one between its
public neighbours), checked in Neo4j when the charts are made; ties go to the smaller id, so a
chart is the same whoever makes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

HOUR_US = 3_600 * 1_000_000
# Events that move someone's follower count, by the sign of the move.
_GAINS = {"follow": 1, "unfollow": -1}
# Events after which the acting user's place in the charts must be checked again: it may have
# been suspended, erased, made undiscoverable or hidden its counts.
_STATE_EVENTS = frozenset({"status", "erase", "privacy"})


def bucket_of(at_us: int) -> int:
    """The hourly bucket of a moment (µs since the epoch)."""
    return at_us // HOUR_US


def window(now_us: int, hours: int) -> list[int]:
    """The buckets of the last ``hours`` hours, the current one included, oldest first."""
    current = bucket_of(now_us)
    return list(range(current - hours + 1, current + 1))


def follower_gains(
    events: Iterable[Mapping[str, str]], now_us: int, hours: int
) -> dict[int, dict[str, int]]:
    """Per bucket of the window, the net followers each target gained from these events
    (targets whose gains cancel out are kept: their zero is a count like any other)."""
    first = window(now_us, hours)[0]
    gains: dict[int, dict[str, int]] = {}
    for event in events:
        sign = _GAINS.get(event.get("type", ""))
        target = event.get("dst", "")
        if sign is None or not target:
            continue
        try:
            bucket = bucket_of(int(event.get("version", "")))
        except ValueError:
            continue  # a malformed entry counts nowhere
        if bucket < first:
            continue
        per_target = gains.setdefault(bucket, {})
        per_target[target] = per_target.get(target, 0) + sign
    return gains


def changed_accounts(events: Iterable[Mapping[str, str]]) -> set[str]:
    """The accounts whose place in the popular chart these events may have moved: the targets
    of follows and unfollows (their counts), and users whose status or settings changed or who
    were erased (whether they may be listed at all)."""
    changed: set[str] = set()
    for event in events:
        kind = event.get("type", "")
        if kind in _GAINS and event.get("dst"):
            changed.add(event["dst"])
        elif kind in _STATE_EVENTS and event.get("src"):
            changed.add(event["src"])
    return changed


def top_trending(
    gained: Sequence[tuple[str, float]], listable: Mapping[str, int], kept: int
) -> list[str]:
    """The ``kept`` accounts that gained the most followers (at least one), among those that
    may be listed (``listable``: id -> followers), most gained first."""
    ranked = sorted(
        ((uid, int(score)) for uid, score in gained if uid in listable and score >= 1),
        key=lambda item: (-item[1], item[0]),
    )
    return [uid for uid, _ in ranked[:kept]]


def top_popular(counts: Sequence[tuple[str, float]], kept: int) -> list[str]:
    """The ``kept`` most followed, most followed first."""
    ranked = sorted(((uid, int(score)) for uid, score in counts), key=lambda i: (-i[1], i[0]))
    return [uid for uid, _ in ranked[:kept]]
