"""Affinity: how close two users are, from their interactions, decayed over time.

a(u, v) is the sum over u's and v's interactions with each other of
weight x 2^(-age / half-life). A decayed weight is carried as (w, as of t), so two readings
combine exactly whatever order they arrive in: the older is decayed onto the later time.
Affinity is never shown to users: it orders friends (closest first) and weighs suggestions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from graphsvc.domain.model import micros_from_datetime

# Affinity keys of score-ordered lists are taken at this fixed time, so a cursor's key stays
# comparable as time passes (decay scales every key alike). 2^(years x 26) stays a finite
# double for decades at a 14-day half-life.
AFFINITY_REFERENCE_US = micros_from_datetime(datetime(2020, 1, 1, tzinfo=UTC))

# An interaction as buffered: actor, target, weight, time (µs since the epoch).
WeightedInteraction = tuple[str, str, float, int]

# The daily cap: the weight one (actor, target) pair gains per day is capped
# (INTERACTIONS_PAIR_DAILY_MAX), by the UTC day the service accepted the events (the caller
# chooses their own times, so those cannot be what a cap counts by); beyond it, the rest of
# that day's weight is dropped. Events of the loaders and the evaluation, which replay months
# of history at once, count against no day.
UNCAPPED = -1


def day_of_ms(ms: int) -> int:
    """The UTC day (days since the epoch) of a time in milliseconds."""
    return ms // 86_400_000


def combine(
    first: tuple[float, int], second: tuple[float, int], half_life_us: int
) -> tuple[float, int]:
    """Two decayed weights (w, as of t) as one, as of the later time."""
    (w1, t1), (w2, t2) = first, second
    t = max(t1, t2)
    return w1 * 2.0 ** ((t1 - t) / half_life_us) + w2 * 2.0 ** ((t2 - t) / half_life_us), t


def aggregate(
    events: Sequence[WeightedInteraction], half_life_us: int, day: int = UNCAPPED
) -> list[dict[str, object]]:
    """One decayed (w, at) per (actor, target), with the sum of the raw weights (``raw``) and
    the day they count against (``day``), sorted (a stable lock order in Neo4j)."""
    pairs: dict[tuple[str, str], tuple[float, int]] = {}
    raw: dict[tuple[str, str], float] = {}
    for actor, target, weight, at in events:
        key = (actor, target)
        pairs[key] = (
            combine(pairs[key], (weight, at), half_life_us) if key in pairs else (weight, at)
        )
        raw[key] = raw.get(key, 0.0) + weight
    return [
        {"a": a, "b": b, "w": w, "at": at, "raw": raw[(a, b)], "day": day}
        for (a, b), (w, at) in sorted(pairs.items())
    ]


def aggregate_days(
    batches: Iterable[tuple[int, Sequence[WeightedInteraction]]], half_life_us: int
) -> list[dict[str, object]]:
    """``aggregate`` of batches of events, each with the day it counts against: one row per
    (actor, target, day), sorted by actor, target and day."""
    by_day: dict[int, list[WeightedInteraction]] = {}
    for day, events in batches:
        by_day.setdefault(day, []).extend(events)
    rows = [row for day, events in by_day.items() for row in aggregate(events, half_life_us, day)]
    rows.sort(key=lambda row: (row["a"], row["b"], row["day"]))
    return rows
