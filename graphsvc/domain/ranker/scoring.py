"""The suggestion ranker: candidate features in, one score per candidate out.

Why a learned linear model over log features: the classic link predictors are each one
feature here (common neighbours = ``paths``, Adamic-Adar = ``aa``, resource allocation = ``ra``),
and a weighted sum of their logarithms is a weighted *product* of them, so the model can
express each heuristic alone and any blend in between; the blend that fits a graph is learned
from that graph's own newest edges by ``graphsvc ranker train``, not tuned by hand on the data
we evaluate on. Scoring 300 candidates is a few thousand multiplications in pure Python: it
needs neither numpy nor the training stack in the API process.

A model is a plain JSON document (kind, features, per-feature scale, standardisation, weights,
and how it was trained), so it can be stored in Neo4j, read by every API process, diffed and
shown (docs/suggestions.md, "What the ranker learned"). ``DEFAULT`` is used until a model is
trained: it ranks as the first generation did (resource allocation through friends,
followers not followed back high).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

# Raw features, as the candidate queries return them (0 when a source did not find the user).
RAW_FEATURES: tuple[str, ...] = (
    # friends-of-friends paths (common neighbours, through my follows), each weighing
    # 1 + ln(1 + my affinity with the friend it goes through) (one without interactions)
    "paths",
    "ra",  # sum of weight/degree over those paths (resource allocation)
    "aa",  # sum of weight/log(2 + degree) (Adamic-Adar)
    "affinity_ra",  # sum of affinity(me, m)/degree(m): paths through close friends
    "fresh",  # the newest path's freshness, 2^(-age / half-life)
    "follows_you",  # 1 when the candidate follows me and I do not follow back
    "follower_affinity",  # my affinity with that follower
    "cof",  # co-followers: people who follow what I follow also follow the candidate
    "cof_paths",
    "walk",  # the share of random walks' steps (with restart, from me) that visited them
    "hop3",  # three follows away (only asked for thin neighbourhoods)
    "hop3_paths",
    "followers",  # the candidate's degrees and recent activity
    "follows",
    "active",
)
# Binary or [0, 1] features are used as they are; the others through log1p(x / scale).
UNSCALED = frozenset({"follows_you", "fresh", "active"})
# Derived: the share of the candidate's followers I reach (Jaccard-like; corrects for size).
DERIVED: tuple[str, ...] = ("paths_share",)
FEATURES: tuple[str, ...] = RAW_FEATURES + DERIVED
# Evidence for a follow: more of it never makes a follow less likely, so a fit may only give
# each a non-negative weight (a learned negative weight on paths is the fit exploiting a biased
# sample, and turns the evidence upside down for every user it serves). The others (the
# candidate's degrees, its activity, freshness, whether it follows the user) may help or hurt
# depending on the graph: their sign is learned.
EVIDENCE = frozenset(
    {
        "paths",
        "ra",
        "aa",
        "affinity_ra",
        "follower_affinity",
        "cof",
        "cof_paths",
        "walk",
        "hop3",
        "hop3_paths",
        "paths_share",
    }
)
# The floor of the weight of resource allocation, the one evidence feature every model keeps:
# paths through friends are weighed by the user's affinity with them (suggestions/candidates),
# so with this floor more interactions with a friend raise every candidate behind that friend
# under any model, however small the raise a fit left to it.
PATH_FLOOR = 0.01
PATH_FEATURE = "ra"
# The features that tell the candidate's own counts (``counts_visibility``): its degrees, and
# the share of its followers I reach, which is over its follower count.
COUNT_FEATURES: tuple[str, ...] = ("followers", "follows", "paths_share")


def weight_bounds() -> list[tuple[float | None, float | None]]:
    """Each feature's (lower, upper) weight, in FEATURES order, for a constrained fit: evidence
    never below zero (``PATH_FEATURE`` never below ``PATH_FLOOR``), the rest free."""
    return [
        (PATH_FLOOR if name == PATH_FEATURE else 0.0 if name in EVIDENCE else None, None)
        for name in FEATURES
    ]


def raw_vector(row: Mapping[str, Any]) -> list[float]:
    return [float(row.get(name) or 0.0) for name in RAW_FEATURES]


_PATHS, _FOLLOWERS = RAW_FEATURES.index("paths"), RAW_FEATURES.index("followers")
_FOLLOWS_YOU = RAW_FEATURES.index("follows_you")
_COUNTS = tuple(FEATURES.index(name) for name in COUNT_FEATURES)


def with_derived(raw: Sequence[float]) -> list[float]:
    return [*raw, raw[_PATHS] / (1.0 + raw[_FOLLOWERS])]


def scored_vector(row: Mapping[str, Any], ranker: Ranker) -> list[float]:
    """A candidate row's features as ``ranker`` scores them, the one place serving and the
    explainer take them from: a candidate that hides its counts from the user
    (``counts_hidden``) is scored blind to them (``Ranker.blind_to_counts``), so neither its
    score nor its place among the others tells them."""
    vector = with_derived(raw_vector(row))
    return ranker.blind_to_counts(vector) if row.get("counts_hidden") else vector


@dataclass(frozen=True, slots=True)
class Contribution:
    """One feature's part in a candidate's score: the score is the intercept plus the sum of
    every feature's ``weight * transformed`` (what the explainer shows)."""

    name: str
    raw: float
    transformed: float
    weight: float

    @property
    def contribution(self) -> float:
        return self.weight * self.transformed


@dataclass(frozen=True)
class Ranker:
    """A logistic model over transformed features; ``score`` is its log-odds (monotone in the
    probability, so it ranks the same and costs no exp)."""

    weights: dict[str, float]
    intercept: float = 0.0
    scale: dict[str, float] = field(default_factory=dict)
    mean: dict[str, float] = field(default_factory=dict)
    std: dict[str, float] = field(default_factory=dict)
    version: int = 0  # 0: the built-in default
    trained: dict[str, Any] = field(default_factory=dict)  # how, on what, and its metrics
    # The model of the candidates that follow the user (``follows_you``), when fitted apart:
    # whether a user follows back a follower is another question than whether it knows a
    # stranger, and one blend of the features answers both badly. None: this one ranks all.
    followers: Ranker | None = None

    def part(self, vector: Sequence[float]) -> Ranker:
        """The model that ranks this candidate."""
        return self.followers if self.followers is not None and vector[_FOLLOWS_YOU] else self

    def transform(self, vector: Sequence[float]) -> list[float]:
        """Features as the model sees them: log-scaled, then standardised."""
        out = []
        for name, value in zip(FEATURES, vector, strict=True):
            if name not in UNSCALED:
                value = math.log1p(max(value, 0.0) / self.scale.get(name, 1.0))
            out.append((value - self.mean.get(name, 0.0)) / (self.std.get(name) or 1.0))
        return out

    def score(self, vector: Sequence[float]) -> float:
        """``intercept + sum(weight * transformed)``, with the standardisation folded into
        the terms once per model (``_terms``): a list of 300 candidates is scored on every
        computation, in the request's time."""
        total, terms = self.part(vector)._terms
        for index, factor, inverse, logged in terms:
            value = vector[index]
            total += factor * (math.log1p(max(value, 0.0) * inverse) if logged else value)
        return total

    @cached_property
    def _terms(self) -> tuple[float, tuple[tuple[int, float, float, bool], ...]]:
        """The constant (the intercept less every weighted mean), and per weighted feature its
        index, weight / std, 1 / scale and whether it is log-scaled."""
        constant = self.intercept
        terms = []
        for index, name in enumerate(FEATURES):
            weight = self.weights.get(name, 0.0)
            if weight == 0.0:
                continue
            std = self.std.get(name) or 1.0
            constant -= weight * self.mean.get(name, 0.0) / std
            inverse = 1.0 / self.scale.get(name, 1.0)
            terms.append((index, weight / std, inverse, name not in UNSCALED))
        return constant, tuple(terms)

    def blind_to_counts(self, vector: Sequence[float]) -> list[float]:
        """The vector with each count feature at the model's centre: the raw value it
        transforms to the training population's mean, so its standardised value is 0 and it
        adds nothing to the score, whatever the count (a constant, unlike a zero count, which
        would rank a hidden count as the smallest)."""
        if self.part(vector) is not self:
            return self.part(vector).blind_to_counts(vector)
        out = list(vector)
        for index in _COUNTS:
            name = FEATURES[index]
            mean = self.mean.get(name, 0.0)
            out[index] = mean if name in UNSCALED else self.scale.get(name, 1.0) * math.expm1(mean)
        return out

    def contributions(self, vector: Sequence[float]) -> list[Contribution]:
        """``score`` feature by feature: the intercept of the model that ranks the candidate
        (``part``) plus ``sum(c.contribution)`` equals it."""
        if self.part(vector) is not self:
            return self.part(vector).contributions(vector)
        return [
            Contribution(name, raw, value, self.weights.get(name, 0.0))
            for name, raw, value in zip(FEATURES, vector, self.transform(vector), strict=True)
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "logistic",
            "features": list(FEATURES),
            "weights": self.weights,
            "intercept": self.intercept,
            "scale": self.scale,
            "mean": self.mean,
            "std": self.std,
            "version": self.version,
            "trained": self.trained,
        } | ({"followers": self.followers.as_json()} if self.followers is not None else {})

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Ranker:
        """A stored model; refuses one made for other features (an older or newer graphsvc)."""
        if body.get("kind") != "logistic" or list(body.get("features", [])) != list(FEATURES):
            raise ValueError(
                f"model kind {body.get('kind')!r} with features {body.get('features')} "
                f"is not this version's ({list(FEATURES)})"
            )
        return cls(
            weights=dict(body["weights"]),
            intercept=float(body["intercept"]),
            scale=dict(body["scale"]),
            mean=dict(body["mean"]),
            std=dict(body["std"]),
            version=int(body["version"]),
            trained=dict(body.get("trained", {})),
            followers=(
                cls.from_json({**body["followers"], "version": body["version"]})
                if body.get("followers")
                else None
            ),
        )


# Until a model is trained: friends-of-friends by resource allocation (with close friends'
# paths counting more), a follower not followed back about as much as a strong path, then
# co-followers, random walks and three-hop paths as tie-breakers for thin neighbourhoods.
DEFAULT = Ranker(
    weights={
        "ra": 4.0,
        "affinity_ra": 2.0,
        "follows_you": 1.0,
        "follower_affinity": 0.5,
        "cof": 0.5,
        "walk": 0.5,
        "hop3": 0.5,
    },
    scale={
        "ra": 0.1,
        "affinity_ra": 0.1,
        "follower_affinity": 1.0,
        "cof": 0.1,
        "walk": 0.01,
        "hop3": 0.01,
    },
)


FOLLOW_BACK_SHARE = 0.5  # of any first places of a list, at most this share are followers
T = TypeVar("T")


def spread(items: list[T], follows_you: Callable[[T], bool]) -> list[T]:
    """``items`` (best first) with the followers not followed back holding at most
    FOLLOW_BACK_SHARE of any first n places (rounded up), each group kept in its order: a
    follower is the likeliest follow there is, and a list of them is a list the user has seen
    in its notifications, not people it may know. Those past the share wait for the next place
    they may take, or follow the others once those run out."""
    backs = [n for n, item in enumerate(items) if follows_you(item)]
    others = [n for n, item in enumerate(items) if not follows_you(item)]
    order: list[int] = []
    b = o = 0
    while b < len(backs) or o < len(others):
        may = b < len(backs) and b < math.ceil((len(order) + 1) * FOLLOW_BACK_SHARE)
        if (may and (o == len(others) or backs[b] < others[o])) or o == len(others):
            order.append(backs[b])
            b += 1
        else:
            order.append(others[o])
            o += 1
    return [items[n] for n in order]
