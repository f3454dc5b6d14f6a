"""What the ranker learns from and is judged on: the served graph's own held-out follows, and
each sampled user's candidates computed by the serving code with those follows invisible.

Why the served graph: which signal predicts a follow differs from graph to graph (following
back in a messaging graph, shared niche follows in a voting graph, many common friends in a
friendship graph), so weights tuned on one graph do not carry over.

The holdout: the newest share of the edges when the graph's times are real (the future is
what serving predicts), or a seeded random share of the follows when they are not.
``auto`` tells them apart by the newest slice's times (``domain/ranker/registry.load_clock``): a
graph loaded without times has one load's clock there, the file's order one microsecond apart,
and its newest slice is the file's tail (the highest ids, or the second direction of every
friendship whose first stayed in training), which a fit would learn and a validation believe.
The random share is drawn per follow (``domain/ranker/validation.held_out``): a held-out
follow whose follow-back stays visible is a follower not followed back yet, as serving sees it
before the follow is made; a friendship (both follows made at once) is drawn whole. The users
are those with held-out follows, sampled evenly, as an evaluation samples them.
Features are computed exactly as serving computes them (``Candidates.rows``) with
the held-out edges invisible, and the candidates' degrees as of the cut, so the held-out edge
never leaks into a feature. Each user's list is scored as served: the ranked candidates, then
the fills of a short list (``Fills``), and the held-out follows that are
follow-backs (the reverse follow visible) are counted apart as well.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.concurrency.pace import FULL_SPEED, Pace
from graphsvc.domain.ranker.registry import TrainError, load_clock
from graphsvc.domain.ranker.scoring import FEATURES, Ranker, raw_vector, with_derived
from graphsvc.domain.ranker.validation import held_out
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
    """One user's candidates: feature vectors, which were held out (followed later), ids, and
    what a list served to the user holds beside them."""

    user: str
    ids: list[str]
    vectors: list[list[float]]
    labels: list[int]
    held: int  # held-out follows of the user, found among the candidates or not
    backs: frozenset[str] = frozenset()  # held-out follow-backs (the reverse follow visible)
    truth: frozenset[str] = frozenset()  # the held-out follows themselves
    fills: tuple[str, ...] = ()  # what fills a list shorter than K (trending, popular)
    band: str = "median"  # ``domain/ranker/validation.band``, set with the exact heuristics
    exact: dict[str, list[str]] = field(default_factory=dict)  # heuristic -> its exact top K
    hidden: tuple[str, ...] = ()  # the user's follows made invisible (the random holdout)
    hidden_back: tuple[str, ...] = ()  # and the follows of the user (a friendship's half)

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
        return replace(
            self,
            labels=[int(y) for y in labels],
            held=self.held - len(self.backs),
            truth=self.truth - self.backs,
        )

    def served(self, top: Sequence[str]) -> list[str]:
        """The first K of a list served from ``top`` (a ranking of the candidates): short,
        it is filled as serving fills it."""
        kept = list(top[:K])
        return kept + [uid for uid in self.fills if uid not in kept][: K - len(kept)]

    def precision(self, top: Sequence[str]) -> float:
        """precision@10 of the list served from ``top``."""
        return self.hits(self.served(top))

    def hits(self, top: Sequence[str]) -> float:
        """precision@10 of ``top`` as it is (an exact heuristic's list, never filled)."""
        return len(self.truth.intersection(top[:K])) / K


@dataclass
class Collected:
    """The holdout used, every sampled user's candidates, and what the collection had to say
    (a split that could not be made, and the other tried); ``before``: the newest holdout's
    cut (the training view is the follows made before it), None for the random one."""

    holdout: str
    examples: list[Example]
    notes: list[str]
    before: int | None = None


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
            before = plans[0][3].get("before")
            return Collected(kind, examples, notes, before)
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
        return await _random_plans(store, share, seed, users, pace)
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


async def _random_plans(
    store: SuggestionStore, share: float, seed: int, users: int, pace: Pace
) -> list[Plan]:
    """The users with follows held out by the seeded draw (``held_out``: a follow alone, a
    friendship whole), ``users`` of them at most, taken in a seeded order of the active users
    (each user with a held-out follow is as likely as any other). A held-out follow hides the
    user's follow; a friendship hides the other's follow of the user too, while a follow-back
    made on its own stays visible (and is counted as one)."""
    async with pace.step():
        order = sorted(await store.active_users(1))
    random.Random(seed).shuffle(order)
    now = time.time_ns() // 1_000
    plans: list[Plan] = []
    for start in range(0, len(order), 500):
        chunk = order[start : start + 500]
        async with pace.step():
            following = await store.followings_of(chunk)
        for user in chunk:
            held = [
                (uid, friendship, back)
                for uid, friendship, back in following.get(user, [])
                if held_out(seed, share, user, uid, friendship)
            ]
            if not held:
                continue
            hidden = sorted(uid for uid, _, _ in held)
            hidden_back = sorted(uid for uid, friendship, _ in held if friendship)
            backs = sorted(uid for uid, friendship, back in held if back and not friendship)
            invisible = {"now": now, "hidden": hidden, "hidden_back": hidden_back}
            plans.append((user, hidden, backs, invisible))
            if len(plans) == users:
                break
        if len(plans) == users:
            break
    return sorted(plans, key=lambda plan: plan[0])


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
    rows = await suggestions.candidates.rows(user, **invisible, job=True)
    truth = frozenset(held)
    ids = [row["id"] for row in rows]
    fills = await suggestions.fills.of(user, set(ids), K - len(ids)) if len(ids) < K else []
    return Example(
        user=user,
        ids=ids,
        vectors=[with_derived(raw_vector(row)) for row in rows],
        labels=[int(row["id"] in truth) for row in rows],
        held=len(truth),
        backs=frozenset(backs),
        truth=truth,
        fills=tuple(s.user_id for s in fills),
        hidden=tuple(invisible.get("hidden", ())),
        hidden_back=tuple(invisible.get("hidden_back", ())),
    )


def single_feature(feature: str, name: str = "") -> Ranker:
    """A classic link predictor as a ranker of its own (``name``: what it is served as)."""
    return Ranker(weights={feature: 1.0}, trained={"heuristic": name} if name else {})


def top_ids(ranker: Ranker, example: Example) -> list[str]:
    """The user's candidates as ``ranker`` ranks them (the serving code's ranking)."""
    rows = [
        {**dict(zip(FEATURES, vector, strict=True)), "id": uid, "sources": []}
        for uid, vector in zip(example.ids, example.vectors, strict=True)
    ]
    return [s.user_id for s in ranked(rows, ranker)[:K]]


def precisions(ranker: Ranker, examples: Sequence[Example]) -> list[float]:
    """Each user's precision@10 of the list ``ranker`` would serve (the same candidates for
    every ranker, so the comparison is of the ranking alone, fills included)."""
    return [example.precision(top_ids(ranker, example)) for example in examples]
