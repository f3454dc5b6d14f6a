"""Affinity: how close two users are, from their interactions, decayed over time.

a(u, v) is the sum over u's and v's interactions with each other of
weight x 2^(-age / half-life). A decayed weight is carried as (w, as of t), so two readings
combine exactly whatever order they arrive in: the older is decayed onto the later time.
Affinity is never shown to users: it orders friends (closest first) and weighs suggestions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from graphsvc.domain.model import micros_from_datetime

DAY_US = 86_400 * 1_000_000
# Affinity keys of score-ordered lists are taken at this fixed time, so a cursor's key stays
# comparable as time passes (decay scales every key alike). 2^(years x 26) stays a finite
# double for decades at a 14-day half-life.
AFFINITY_REFERENCE_US = micros_from_datetime(datetime(2020, 1, 1, tzinfo=UTC))

# An interaction as buffered: actor, target, weight, time (µs since the epoch).
WeightedInteraction = tuple[str, str, float, int]


def combine(
    first: tuple[float, int], second: tuple[float, int], half_life_us: int
) -> tuple[float, int]:
    """Two decayed weights (w, as of t) as one, as of the later time."""
    (w1, t1), (w2, t2) = first, second
    t = max(t1, t2)
    return w1 * 2.0 ** ((t1 - t) / half_life_us) + w2 * 2.0 ** ((t2 - t) / half_life_us), t


def aggregate(events: Sequence[WeightedInteraction], half_life_us: int) -> list[dict[str, object]]:
    """One decayed (w, at) per (actor, target), sorted (a stable lock order in Neo4j)."""
    pairs: dict[tuple[str, str], tuple[float, int]] = {}
    for actor, target, weight, at in events:
        key = (actor, target)
        pairs[key] = (
            combine(pairs[key], (weight, at), half_life_us) if key in pairs else (weight, at)
        )
    return [{"a": a, "b": b, "w": w, "at": at} for (a, b), (w, at) in sorted(pairs.items())]
