"""What the ranker learns from: the served graph's own held-out follows, and each sampled
user's candidates computed by the serving code with those follows invisible.

Why the served graph: which signal predicts a follow differs from graph to graph (following
back in a messaging graph, shared niche follows in a voting graph, many common friends in a
friendship graph), so weights tuned on one graph do not carry over.

The holdout: the newest share of the edges when the graph's times are real (the future is
what serving predicts), or a seeded random share of sampled users' follows when they are not
(a graph loaded without times: its newest slice is all one time, so "newest" would be no
slice at all). ``auto`` chooses by asking how many distinct times the newest slice has.
Features are computed exactly as serving computes them (``Suggestions.candidate_rows``) with
the held-out edges invisible, and the candidates' degrees as of the cut, so the held-out edge
never leaks into a feature. Undirected pairs are held out together: a pair loaded as two edges
has one time, and the random holdout hides both directions of each held edge.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.domain.ranker_models import TrainError
from graphsvc.domain.ranking import FEATURES, Ranker, raw_vector, with_derived
from graphsvc.services.suggestions import Suggestions, ranked

K = 10
CONCURRENCY = 4
HOLDOUTS = ("auto", "newest", "random")
# One-feature rankers reported next to the model (the classic link predictors).
SINGLE = {"common neighbours": "paths", "Adamic-Adar": "aa", "resource allocation": "ra"}

Plan = tuple[str, list[str], dict[str, Any]]  # user, its held-out follows, what is invisible
Progress = Callable[[int], None]  # told how many more users' candidates were computed


@dataclass
class Example:
    """One user's candidates: feature vectors, which were held out (followed later), ids."""

    user: str
    ids: list[str]
    vectors: list[list[float]]
    labels: list[int]
    held: int  # held-out follows of the user, found among the candidates or not


async def collect(
    store: SuggestionStore,
    suggestions: Suggestions,
    holdout: str,
    share: float,
    seed: int,
    users: int,
    progress: Progress | None = None,
) -> tuple[str, list[Example]]:
    """The holdout used (``auto`` resolved) and every sampled user's candidates."""
    used, plans = await _plans(store, holdout, share, seed, users)
    if not plans:
        raise TrainError("no user has both held-out follows and follows before them")
    examples: list[Example] = []
    for start in range(0, len(plans), CONCURRENCY):
        chunk = plans[start : start + CONCURRENCY]
        examples += await asyncio.gather(*(_example(suggestions, *plan) for plan in chunk))
        if progress is not None:
            progress(len(chunk))
    return used, examples


async def _plans(
    store: SuggestionStore, holdout: str, share: float, seed: int, users: int
) -> tuple[str, list[Plan]]:
    if holdout not in HOLDOUTS:
        raise TrainError(f"the holdout is one of {', '.join(HOLDOUTS)}, got {holdout!r}")
    if holdout in ("auto", "newest"):
        _, cutoff, times = await store.holdout_cutoff(share)
        if cutoff is None:
            raise TrainError("the graph has no follows to learn from")
        if holdout == "newest" or times > 1:
            held = await store.holdout_newest(cutoff)
            sample = sampled(sorted(held), users, seed)
            return "newest", [(u, held[u], {"now": cutoff, "before": cutoff}) for u in sample]
    return "random", await _random_plans(store, share, seed, users)


async def _random_plans(store: SuggestionStore, share: float, seed: int, users: int) -> list[Plan]:
    sample = sampled(await store.active_users(2), users, seed)
    rng = random.Random(seed)
    now = time.time_ns() // 1_000
    plans: list[Plan] = []
    for start in range(0, len(sample), 500):
        following = await store.followings_of(sample[start : start + 500])
        for user in sample[start : start + 500]:
            theirs = sorted(following.get(user, []))
            hidden = rng.sample(theirs, max(1, round(len(theirs) * share)))
            plans.append((user, hidden, {"now": now, "hidden": hidden}))
    return plans


def sampled(candidates: Sequence[str], users: int, seed: int) -> list[str]:
    """A seeded sample of ``users`` of the candidates, in id order."""
    return sorted(random.Random(seed).sample(list(candidates), min(users, len(candidates))))


async def _example(
    suggestions: Suggestions, user: str, held: Sequence[str], invisible: dict[str, Any]
) -> Example:
    rows = await suggestions.candidate_rows(user, **invisible)
    truth = set(held)
    return Example(
        user=user,
        ids=[row["id"] for row in rows],
        vectors=[with_derived(raw_vector(row)) for row in rows],
        labels=[int(row["id"] in truth) for row in rows],
        held=len(truth),
    )


def single_feature(feature: str) -> Ranker:
    return Ranker(weights={feature: 1.0})


def precision_at_k(ranker: Ranker, examples: Sequence[Example]) -> float:
    """Mean precision@10 of the ranker over the users' candidates (the same candidates for
    every ranker, so the comparison is of the ranking alone)."""
    if not examples:
        return 0.0
    total = 0.0
    for example in examples:
        rows = [
            {**dict(zip(FEATURES, vector, strict=True)), "id": uid, "sources": []}
            for uid, vector in zip(example.ids, example.vectors, strict=True)
        ]
        top = [s.user_id for s in ranked(rows, ranker)[:K]]
        truth = {uid for uid, y in zip(example.ids, example.labels, strict=True) if y}
        total += len(truth.intersection(top)) / K
    return total / len(examples)
