"""People you may know: the interactions recorded (the affinities), the suggestions, and the
impressions that sink suggestions shown too often (these two behind the one Redis breaker),
each counting for the ranker version of the recommendation it carries; the accounts similar
to a seed, and the explainer of a suggestion (internal)."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.builders.core import Core
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.services.impressions import Impressions
from graphsvc.services.interactions import Interactions
from graphsvc.services.ranker import RankerSource
from graphsvc.services.similar import SimilarAccounts
from graphsvc.services.suggestion_explainer import SuggestionExplainer
from graphsvc.services.suggestions import Suggestions


@dataclass(frozen=True, slots=True)
class Suggesting:
    interactions: Interactions
    suggestions: Suggestions
    impressions: Impressions
    similar: SimilarAccounts
    explainer: SuggestionExplainer

    @property
    def plans(self) -> WarmUp:
        """Neo4j's plans of the candidate reads, made before the first request."""
        return self.suggestions.candidates.plans


def build_suggesting(core: Core) -> Suggesting:
    settings, neo4j, redis = core.settings, core.neo4j, core.redis
    interactions = Interactions(neo4j.suggestions, redis.interactions, settings.interactions)
    impressions = Impressions(redis.impressions, core.breaker, settings.suggestions, core.feedback)
    suggestions = Suggestions(
        neo4j.suggestions,
        redis.suggestion_cache,
        redis.cold_start,
        core.breaker,
        settings.suggestions,
        settings.interactions,
        RankerSource(neo4j.ranker_models, neo4j.suggestions, settings.suggestions),
        impressions,
        core.privacy,
        core.feedback,
    )
    similar = SimilarAccounts(neo4j.cold_start, settings.cold_start)
    explainer = SuggestionExplainer(suggestions, neo4j.suggestions, impressions)
    return Suggesting(interactions, suggestions, impressions, similar, explainer)
