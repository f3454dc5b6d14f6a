"""What the API's routes call, by name: the core's services, the graph's own reads, people you
may know, timelines, moderation, keys and limits, the new-follower streams and health."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from graphsvc.builders.access import build_rate_limits
from graphsvc.builders.core import Core
from graphsvc.builders.graph_reads import GraphReads
from graphsvc.builders.suggestions import Suggesting
from graphsvc.services.access import KeyRing
from graphsvc.services.audiences import Audiences
from graphsvc.services.changes import Changes
from graphsvc.services.distance import Distances
from graphsvc.services.follow_pages import FollowPages
from graphsvc.services.follow_requests import FollowRequests
from graphsvc.services.follower_events import FollowerEvents
from graphsvc.services.graph_pages import GraphPages
from graphsvc.services.health import Gauges, Health
from graphsvc.services.impressions import Impressions
from graphsvc.services.interactions import Interactions
from graphsvc.services.moderation import Moderation
from graphsvc.services.mutes import Mutes
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.rate_limits import RateLimits
from graphsvc.services.relations import Relations
from graphsvc.services.series import GrowthSeries
from graphsvc.services.similar import SimilarAccounts
from graphsvc.services.suggestion_explainer import SuggestionExplainer
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.suggestions import Suggestions
from graphsvc.services.timelines import Timelines
from graphsvc.settings import Settings


def fields_of(parts: object, cls: type) -> dict[str, Any]:
    """The parts a bundle holds, by name, as ``cls`` declares them (a subclass's own extra
    fields left out), to build a larger bundle from them."""
    return {f.name: getattr(parts, f.name) for f in dataclasses.fields(cls)}


@dataclass(frozen=True, slots=True)
class Serving:
    """Routes take the one service they call (``api/http/context.py``)."""

    settings: Settings
    core: Core
    relations: Relations
    follow_requests: FollowRequests
    mutes: Mutes
    privacy: PrivacyRules
    follow_pages: FollowPages
    graph_pages: GraphPages
    changes: Changes
    growth_series: GrowthSeries
    distances: Distances
    audiences: Audiences
    moderation: Moderation
    interactions: Interactions
    suggestions: Suggestions
    similar: SimilarAccounts
    suggestion_explainer: SuggestionExplainer
    impressions: Impressions
    feedback: SuggestionFeedback
    follower_events: FollowerEvents
    health: Health
    gauges: Gauges
    access: KeyRing
    rate_limits: RateLimits
    timelines: Timelines

    def fields(self) -> dict[str, Any]:
        return fields_of(self, Serving)

    async def close(self) -> None:
        """Stop what runs in the background (a worker resumes the unfinished jobs)."""
        await self.follower_events.close()
        await self.core.jobs.close()


def build_serving_parts(
    core: Core,
    access: KeyRing,
    moderation: Moderation,
    timelines: Timelines,
    suggesting: Suggesting,
    graph: GraphReads,
) -> Serving:
    settings = core.settings
    rate_limits = build_rate_limits(core)
    ranker = suggesting.suggestions.ranker
    follower_events = FollowerEvents(
        core.redis.stream,
        core.redis.stream_slots,
        access,
        rate_limits,
        settings.events,
        core.mutes,
        core.mirror_sync,
    )
    return Serving(
        settings=settings,
        core=core,
        relations=core.relations,
        follow_requests=core.follow_requests,
        mutes=core.mutes,
        privacy=core.privacy,
        follow_pages=core.follow_pages,
        **fields_of(graph, GraphReads),
        moderation=moderation,
        interactions=suggesting.interactions,
        suggestions=suggesting.suggestions,
        similar=suggesting.similar,
        suggestion_explainer=suggesting.explainer,
        impressions=suggesting.impressions,
        feedback=core.feedback,
        follower_events=follower_events,
        health=Health(
            core.neo4j.store,
            core.redis.mirror,
            ranker,
            (core.neo4j.edges.plans, suggesting.suggestions.candidates.plans),
        ),
        gauges=Gauges(core.neo4j.outbox, ranker),
        access=access,
        rate_limits=rate_limits,
        timelines=timelines,
    )
