"""`graphsvc train-pymk`: fit the suggestion ranker on the graph being served.

Why on the served graph: which signal predicts a follow differs from graph to graph (following
back in a messaging graph, shared niche follows in a voting graph, many common friends in a
friendship graph), so weights tuned on one graph do not carry over. The trainer asks the graph
itself: it holds out a slice of its own edges, the newest (``--holdout newest``, the default:
the future is what serving predicts) or a seeded random share of sampled users' follows
(``--holdout random``, for graphs loaded without times, whose "newest" edges are only the end of
a file), computes every candidate's features exactly as serving does with those edges made
invisible (``Suggestions.candidate_rows``), and fits a logistic regression (scikit-learn) on
"was this candidate followed". Undirected pairs are held out together: a pair loaded as two
edges has one time, and the random holdout hides both directions of each held edge.

Users are split in two by the seed: the model is fitted on 80% of them and its precision@10 is
measured on the other 20%, next to the default ranker and the classic one-feature rankers on
the same candidates; then it is refitted on everyone and stored, with those metrics, as the
next version in Neo4j, where every API process picks it up (``services/ranker``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from tqdm import tqdm

from graphsvc.bootstrap import Services
from graphsvc.domain.ranking import DEFAULT, FEATURES, UNSCALED, Ranker, raw_vector, with_derived
from graphsvc.services.suggestions import ranked

K = 10
CONCURRENCY = 4
VALIDATION_SHARE = 0.2
MIN_POSITIVES = 20
# One-feature rankers reported next to the model (the classic link predictors).
SINGLE = {"common neighbours": "paths", "Adamic-Adar": "aa", "resource allocation": "ra"}


class TrainError(Exception):
    """The graph cannot train a model (too small, no held-out edges); the message says why."""


@dataclass
class Example:
    """One user's candidates: feature vectors, which were held out (followed later), ids."""

    user: str
    ids: list[str]
    vectors: list[list[float]]
    labels: list[int]
    held: int  # held-out follows of the user, found among the candidates or not


@dataclass
class TrainReport:
    version: int
    holdout: str
    users: int
    candidates: int
    positives: int
    held: int
    validation: dict[str, float]  # precision@10 on the validation users, per ranker
    weights: dict[str, float]
    seconds: float
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        found = self.positives / self.held if self.held else 0.0
        out = [
            f"holdout: {self.holdout}; {self.users:,} users, {self.candidates:,} candidates, "
            f"{self.positives:,} of {self.held:,} held-out follows among them ({found:.0%})",
            "precision@10 on the validation users: "
            + ", ".join(f"{name} {value:.4f}" for name, value in self.validation.items()),
            "weights (standardised log features): "
            + ", ".join(
                f"{n} {w:+.2f}"
                for n, w in sorted(self.weights.items(), key=lambda item: -abs(item[1]))
                if abs(w) >= 0.005
            ),
        ]
        out += self.notes
        stored = f"stored as version {self.version}" if self.version else "not stored"
        out.append(f"{stored} in {self.seconds:.1f}s")
        return out


async def train(
    services: Services,
    *,
    holdout: str = "newest",
    share: float = 0.1,
    seed: int = 1,
    users: int = 2_000,
    store: bool = True,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> TrainReport:
    started = time.monotonic()
    if not 0 < share < 1:
        raise TrainError(f"the held-out share must be between 0 and 1, got {share}")
    examples = await collect(services, holdout, share, seed, users, progress)
    positives = sum(sum(e.labels) for e in examples)
    if positives < MIN_POSITIVES:
        raise TrainError(
            f"only {positives} held-out follows are among the candidates of {len(examples)} "
            f"users; a model needs at least {MIN_POSITIVES} (a larger graph, or a larger --share)"
        )
    shuffled = sorted(examples, key=lambda e: e.user)
    random.Random(seed).shuffle(shuffled)
    cut = max(1, int(len(shuffled) * VALIDATION_SHARE))
    validation, fitting = shuffled[:cut], shuffled[cut:]
    report = {"model": precision_at_k(fit(fitting, seed), validation)}
    report["default"] = precision_at_k(DEFAULT, validation)
    for name, feature in SINGLE.items():
        report[name] = precision_at_k(single_feature(feature), validation)
    model = fit(examples, seed)
    trained = {
        "holdout": holdout,
        "share": share,
        "seed": seed,
        "users": len(examples),
        "candidates": sum(len(e.ids) for e in examples),
        "positives": positives,
        "precision_at_10": report,
        "at": int(time.time()),
    }
    version = 0
    if store:
        version = await save(services, model, trained)
    return TrainReport(
        version=version,
        holdout=holdout,
        users=len(examples),
        candidates=trained["candidates"],
        positives=positives,
        held=sum(e.held for e in examples),
        validation=report,
        weights=model.weights,
        seconds=time.monotonic() - started,
    )


async def collect(
    services: Services, holdout: str, share: float, seed: int, users: int, progress: bool
) -> list[Example]:
    """Every sampled user's candidates, with the held-out edges invisible."""
    store = services.neo4j.suggestions
    if holdout == "newest":
        _, cutoff = await store.holdout_cutoff(share)
        if cutoff is None:
            raise TrainError("the graph has no follows to learn from")
        held = await store.holdout_newest(cutoff)
        sample = _sample(sorted(held), users, seed)
        plans = [(u, held[u], {"now": cutoff, "before": cutoff}) for u in sample]
    elif holdout == "random":
        plans = await _random_plans(services, share, seed, users)
    else:
        raise TrainError(f"--holdout is newest or random, got {holdout!r}")
    if not plans:
        raise TrainError("no user has both held-out follows and follows before them")
    examples: list[Example] = []
    with tqdm(total=len(plans), desc="features", unit="user", disable=not progress) as bar:
        for start in range(0, len(plans), CONCURRENCY):
            chunk = plans[start : start + CONCURRENCY]
            found = await asyncio.gather(*(_example(services, *plan) for plan in chunk))
            examples += found
            bar.update(len(chunk))
    return examples


async def _random_plans(
    services: Services, share: float, seed: int, users: int
) -> list[tuple[str, list[str], dict[str, Any]]]:
    store = services.neo4j.suggestions
    sample = _sample(await store.active_users(2), users, seed)
    rng = random.Random(seed)
    now = time.time_ns() // 1_000
    plans = []
    for start in range(0, len(sample), 500):
        following = await store.followings_of(sample[start : start + 500])
        for user in sample[start : start + 500]:
            theirs = sorted(following.get(user, []))
            count = max(1, round(len(theirs) * share))
            hidden = rng.sample(theirs, count)
            plans.append((user, hidden, {"now": now, "hidden": hidden}))
    return plans


def _sample(candidates: Sequence[str], users: int, seed: int) -> list[str]:
    return sorted(random.Random(seed).sample(list(candidates), min(users, len(candidates))))


async def _example(
    services: Services, user: str, held: Sequence[str], invisible: dict[str, Any]
) -> Example:
    rows = await services.suggestions.candidate_rows(user, **invisible)
    truth = set(held)
    return Example(
        user=user,
        ids=[row["id"] for row in rows],
        vectors=[with_derived(raw_vector(row)) for row in rows],
        labels=[int(row["id"] in truth) for row in rows],
        held=len(truth),
    )


def fit(examples: Sequence[Example], seed: int) -> Ranker:
    """A logistic regression on log-scaled, standardised features. Each feature's scale is the
    median of its non-zero values, so log1p(x / scale) is about log 2 for a typical value
    whatever the units (a count of paths, a sum of 1/degree)."""
    vectors = np.array([v for e in examples for v in e.vectors], dtype=float)
    labels = np.array([y for e in examples for y in e.labels])
    scale: dict[str, float] = {}
    logged = vectors.copy()
    for n, name in enumerate(FEATURES):
        if name in UNSCALED:
            continue
        nonzero = vectors[:, n][vectors[:, n] > 0]
        scale[name] = float(np.median(nonzero)) if nonzero.size else 1.0
        logged[:, n] = np.log1p(np.maximum(vectors[:, n], 0.0) / scale[name])
    means, stds = logged.mean(axis=0), logged.std(axis=0)
    stds[stds == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=5_000, random_state=seed)
    model.fit((logged - means) / stds, labels)
    weights = {name: float(w) for name, w in zip(FEATURES, model.coef_[0], strict=True)}
    mean = {name: float(m) for name, m in zip(FEATURES, means, strict=True)}
    std = {name: float(d) for name, d in zip(FEATURES, stds, strict=True)}
    return Ranker(weights, float(model.intercept_[0]), scale, mean, std)


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


async def save(services: Services, model: Ranker, trained: dict[str, Any]) -> int:
    name = services.settings.suggestions.pymk_model_name
    body = dataclasses.replace(model, trained=trained).as_json()
    version = await services.neo4j.suggestions.save_model(
        name, json.dumps(body), json.dumps(trained), time.time_ns() // 1_000
    )
    return version
