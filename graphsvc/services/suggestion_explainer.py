"""Why a user is, or is not, suggested to another: the explainer of people you may know
(internal: features, weights and affinities are never shown to users).

Policy: the explanation is computed the way the suggestions are (``Suggestions.computed``, with
the model ``Suggestions.ranker_for`` picks for the user), never from the cache, so it explains
what the next computation serves: the target's rank among the kept 50, the sources that found
it, each feature's raw and transformed value, weight and contribution (the score is the
intercept plus their sum; the probability its logistic), and how often it was shown (the
impression discount applied when served). A target that hides its counts is explained as it
is scored (``scored_vector``): its count features at the model's centre, contributing nothing. A target that is not suggested is named one reason:
the first exclusion that removes it, checked in a fixed order by one query
(``suggestions/exclusion``); else ``ranked_below_kept`` when it was a candidate ranked below
the 50 kept, or ``not_reached`` when no source reached it within the bounds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.ranker.scoring import Contribution, Ranker, scored_vector
from graphsvc.services.impressions import Impressions
from graphsvc.services.suggestions import Computed, Suggestions


@dataclass(frozen=True, slots=True)
class Explanation:
    """What the explainer answers. ``rank`` is 1-based among every candidate ranked (so a
    candidate below the kept 50 has one too); ``score`` is the log-odds, None for a target that
    was no candidate; ``excluded`` is None for a suggested target; ``counts_hidden``: the
    target hides its counts, so its count features were scored at the model's centre."""

    user_id: str
    target_id: str
    suggested: bool
    rank: int | None
    sources: list[str]
    excluded: str | None
    model_version: int
    intercept: float
    features: list[Contribution] = field(default_factory=list)
    score: float | None = None
    probability: float | None = None
    shows: int = 0
    factor: float = 1.0
    counts_hidden: bool = False


class SuggestionExplainer:
    def __init__(
        self, suggestions: Suggestions, store: SuggestionStore, impressions: Impressions
    ) -> None:
        self._suggestions = suggestions
        self._store = store
        self._impressions = impressions

    async def explain(self, user_id: str, target_id: str) -> Explanation:
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        ranker = await self._suggestions.ranker_for(user_id)
        computed = await self._suggestions.computed(user_id, ranker)
        shows, factor = await self._impressions.discount(user_id, target_id)
        kept = [s.user_id for s in computed.kept]
        suggested = target_id in kept
        row = next((r for r in computed.rows if r["id"] == target_id), None)
        excluded = None if suggested else await self._why_not(user_id, target_id, row)
        common: dict[str, Any] = {
            "user_id": user_id,
            "target_id": target_id,
            "suggested": suggested,
            "rank": rank_of(computed, target_id),
            "excluded": excluded,
            "model_version": ranker.version,
            "intercept": ranker.intercept,
            "shows": shows,
            "factor": factor,
        }
        if row is None:  # a fill (recently active, popular) or no candidate at all
            fill = next((s for s in computed.kept if s.user_id == target_id), None)
            return Explanation(**common, sources=list(fill.sources) if fill else [])
        return Explanation(
            **common,
            sources=sorted(row["sources"]),
            counts_hidden=bool(row.get("counts_hidden")),
            **scored(ranker, row),
        )

    async def _why_not(self, user_id: str, target_id: str, row: dict[str, Any] | None) -> str:
        if row is not None:  # a candidate, so no exclusion holds: ranked too low
            return "ranked_below_kept"
        excluded = await self._store.exclusion(user_id, target_id, time.time_ns() // 1_000)
        return excluded or "not_reached"


def rank_of(computed: Computed, target_id: str) -> int | None:
    """The target's 1-based place: in the kept list (fills included), else among every
    candidate ranked."""
    for ordered in (computed.kept, computed.ranked):
        for position, item in enumerate(ordered, start=1):
            if item.user_id == target_id:
                return position
    return None


def scored(ranker: Ranker, row: dict[str, Any]) -> dict[str, Any]:
    """The candidate's features, score and probability, as ``ranked`` computes them."""
    features = ranker.contributions(scored_vector(row, ranker))
    score = ranker.intercept + sum(c.contribution for c in features)
    probability = 1.0 / (1.0 + math.exp(-score)) if score > -700 else 0.0
    return {"features": features, "score": score, "probability": probability}
