"""What the ranker learns from: the served graph's own held-out follows, and each sampled
user's candidates computed by the serving code with those follows invisible.

Why the served graph: which signal predicts a follow differs from graph to graph (following
back in a messaging graph, shared niche follows in a voting graph, many common friends in a
friendship graph), so weights tuned on one graph do not carry over.

The holdout: the newest share of the edges when the graph's times are real (the future is
what serving predicts), or a seeded random share of sampled users' follows when they are not.
``auto`` tells them apart by the newest slice's times (``domain/ranker_models.load_clock``): a
graph loaded without times has one load's clock there, the file's order one microsecond apart,
and its newest slice is the file's tail (the highest ids, or the second direction of every
friendship whose first stayed in training), which a fit would learn and a validation believe.
Features are computed exactly as serving computes them (``Suggestions.candidate_rows``) with
the held-out edges invisible, and the candidates' degrees as of the cut, so the held-out edge
never leaks into a feature. The random holdout hides each held follow in both directions, so a
mutual pair is held out whole; the newest holdout keeps the follow-backs it holds (a follow made
after its reverse, which stays in training) and the report counts them apart.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.concurrency.pace import FULL_SPEED, Pace
from graphsvc.domain.ranker_models import Scores, TrainError, load_clock
from graphsvc.domain.ranking import FEATURES, Ranker, raw_vector, with_derived
from graphsvc.services.suggestions import Suggestions, ranked

K = 10
CONCURRENCY = 4
HOLDOUTS = ("auto", "newest", "random")
MIN_POSITIVES = 20
HOLDOUT_PAGE = 5_000  # held-out follows, or their followers, read at once
# One-feature rankers reported next to the model (the classic link predictors).
SINGLE = {"common neighbours": "paths", "Adamic-Adar": "aa", "resource allocation": "ra"}

# user, its held-out follows, the follow-backs among them, what is invisible
Plan = tuple[str, list[str], list[str], dict[str, Any]]
TIMED = ("fresh", "active")  # the features that tell when, not whether
_TIMED = frozenset(FEATURES.index(name) for name in TIMED)
Progress = Callable[[int], None]  # told how many more users' candidates were computed


@dataclass
class Example:
    """One user's candidates: feature vectors, which were held out (followed later), ids."""

    user: str
    ids: list[str]
    vectors: list[list[float]]
    labels: list[int]
    held: int  # held-out follows of the user, found among the candidates or not
    backs: frozenset[str] = frozenset()  # held-out follow-backs of training follows

    def timeless(self) -> Example:
        """The example with the features that tell time (``TIMED``) at zero: what a fit learns
        from a random holdout, whose held-out follows are no later than the others, so when a
        path or a candidate was made says nothing of them (and on a graph loaded in one go,
        those features would only learn the file's order, then drift as the clock moves)."""
        vectors = [[0.0 if n in _TIMED else v for n, v in enumerate(x)] for x in self.vectors]
        return replace(self, vectors=vectors)

    def discoveries(self) -> Example:
        """The example with its follow-backs no longer counted as found."""
        labels = [y and uid not in self.backs for uid, y in zip(self.ids, self.labels, strict=True)]
        return replace(self, labels=[int(y) for y in labels], held=self.held - len(self.backs))


@dataclass
class Collected:
    """The holdout used, every sampled user's candidates, and what the collection had to say
    (a split that could not be made, and the other tried)."""

    holdout: str
    examples: list[Example]
    notes: list[str]


async def collect(
    store: SuggestionStore,
    suggestions: Suggestions,
    holdout: str,
    share: float,
    seed: int,
    users: int,
    progress: Progress | None = None,
    pace: Pace = FULL_SPEED,
) -> Collected:
    """Every sampled user's candidates under the holdout asked for (``auto``: newest where the
    graph's times are real, else random); a holdout that cannot be made (no user with held-out
    follows and follows before them, too few found among the candidates) falls back to the
    other kind, and only when both fail does the training fail."""
    if holdout not in HOLDOUTS:
        raise TrainError(f"the holdout is one of {', '.join(HOLDOUTS)}, got {holdout!r}")
    first = holdout if holdout != "auto" else await _resolved(store, share)
    notes: list[str] = []
    for kind in (first, "random" if first == "newest" else "newest"):
        try:
            plans = await _plans(store, kind, share, seed, users, pace)
            examples = await _examples(suggestions, plans, progress, pace)
            return Collected(kind, examples, notes)
        except TrainError as exc:
            notes.append(f"the {kind} holdout cannot be made: {exc}")
    raise TrainError("; ".join(notes))


async def _resolved(store: SuggestionStore, share: float) -> str:
    """``auto``: the newest follows where their times are real, else a random share."""
    _, cutoff, times, steps = await store.holdout_cutoff(share)
    if cutoff is None:
        raise TrainError("the graph has no follows to learn from")
    return "random" if load_clock(times, steps) else "newest"


async def _examples(
    suggestions: Suggestions, plans: list[Plan], progress: Progress | None, pace: Pace
) -> list[Example]:
    """Each plan's candidates: CONCURRENCY users at once at full speed, one at a time when
    paced (a worker's training beside the serving path)."""
    if not plans:
        raise TrainError("no user has both held-out follows and follows before them")
    examples: list[Example] = []
    at_once = CONCURRENCY if pace.full_speed else 1
    for start in range(0, len(plans), at_once):
        chunk = plans[start : start + at_once]
        async with pace.step():
            examples += await asyncio.gather(*(_example(suggestions, *plan) for plan in chunk))
        if progress is not None:
            progress(len(chunk))
    positives = sum(sum(e.labels) for e in examples)
    if positives < MIN_POSITIVES:
        raise TrainError(
            f"only {positives} held-out follows are among the candidates of {len(examples)} "
            f"users; a model needs at least {MIN_POSITIVES} (a larger graph or share)"
        )
    return examples


async def _plans(
    store: SuggestionStore, holdout: str, share: float, seed: int, users: int, pace: Pace
) -> list[Plan]:
    if holdout == "random":
        return await _random_plans(store, share, seed, users)
    _, cutoff, _, _ = await store.holdout_cutoff(share)
    if cutoff is None:
        raise TrainError("the graph has no follows to learn from")
    held = await _held_out(store, cutoff, pace)
    sample = sampled(sorted(held), users, seed)
    invisible = {"now": cutoff, "before": cutoff}
    return [(u, held[u][0], held[u][1], invisible) for u in sample]


async def _held_out(
    store: SuggestionStore, cutoff: int, pace: Pace
) -> dict[str, tuple[list[str], list[str]]]:
    """Per user who followed from ``cutoff`` on and before it: (whom, the follow-backs among
    them). Read a page at a time, each a step of ``pace``: at full speed the holdout was one
    query that kept Neo4j busy for seconds."""
    held: dict[str, tuple[list[str], list[str]]] = {}
    after: tuple[int, str, str] | None = None
    while True:
        async with pace.step():
            page = await store.holdout_page(cutoff, after, HOLDOUT_PAGE)
        for since, src, dst, back in page:
            whom, backs = held.setdefault(src, ([], []))
            whom.append(dst)
            if back:
                backs.append(dst)
            after = (since, src, dst)
        if len(page) < HOLDOUT_PAGE:
            break
    ids = sorted(held)
    learners: set[str] = set()
    for start in range(0, len(ids), HOLDOUT_PAGE):
        async with pace.step():
            learners |= await store.holdout_users(ids[start : start + HOLDOUT_PAGE], cutoff)
    return {user: held[user] for user in ids if user in learners}


async def _random_plans(store: SuggestionStore, share: float, seed: int, users: int) -> list[Plan]:
    """A seeded share of each sampled user's follows, hidden in both directions (the user's
    follow and any follow back are invisible to its candidates alike), so a mutual pair is
    held out whole and no held-out follow is a follow-back."""
    sample = sampled(await store.active_users(2), users, seed)
    rng = random.Random(seed)
    now = time.time_ns() // 1_000
    plans: list[Plan] = []
    for start in range(0, len(sample), 500):
        following = await store.followings_of(sample[start : start + 500])
        for user in sample[start : start + 500]:
            theirs = sorted(following.get(user, []))
            hidden = rng.sample(theirs, max(1, round(len(theirs) * share)))
            plans.append((user, hidden, [], {"now": now, "hidden": hidden}))
    return plans


def sampled(candidates: Sequence[str], users: int, seed: int) -> list[str]:
    """A seeded sample of ``users`` of the candidates, in id order."""
    return sorted(random.Random(seed).sample(list(candidates), min(users, len(candidates))))


async def _example(
    suggestions: Suggestions,
    user: str,
    held: Sequence[str],
    backs: Sequence[str],
    invisible: dict[str, Any],
) -> Example:
    rows = await suggestions.candidate_rows(user, **invisible, job=True)
    truth = set(held)
    return Example(
        user=user,
        ids=[row["id"] for row in rows],
        vectors=[with_derived(raw_vector(row)) for row in rows],
        labels=[int(row["id"] in truth) for row in rows],
        held=len(truth),
        backs=frozenset(backs),
    )


def single_feature(feature: str, name: str = "") -> Ranker:
    """A classic link predictor as a ranker of its own (``name``: what it is served as)."""
    return Ranker(weights={feature: 1.0}, trained={"heuristic": name} if name else {})


def precision_at_k(ranker: Ranker, examples: Sequence[Example]) -> float:
    """Mean precision@10 of the ranker over the users' candidates (the same candidates for
    every ranker, so the comparison is of the ranking alone), ranked by the serving code."""
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


def scores(rankers: dict[str, Ranker], examples: Sequence[Example]) -> Scores:
    """Each ranker's precision@10 on the users, and on two disjoint halves of them (every
    other user in id order: the halves' difference is the noise a lift must beat)."""
    ordered = sorted(examples, key=lambda e: e.user)
    halves = (ordered[0::2], ordered[1::2])
    return Scores(
        {name: precision_at_k(r, ordered) for name, r in rankers.items()},
        (
            {name: precision_at_k(r, halves[0]) for name, r in rankers.items()},
            {name: precision_at_k(r, halves[1]) for name, r in rankers.items()},
        ),
    )
