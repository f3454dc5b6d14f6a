"""Routes of people you may know: interactions, suggestions, dismissals, impressions, and the
internal affinities and explainer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import RecommendationId, SeedId, TargetId, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.model import Interaction
from graphsvc.wire.schemas import (
    AcceptedBody,
    AffinitiesBody,
    DismissBody,
    ErrorBody,
    ExplanationBody,
    ImpressionsIn,
    InteractionIn,
    RecordedBody,
    SimilarBody,
    SuggestionsBody,
    SuggestionsReportBody,
    settings_extra,
)

router = APIRouter(generate_unique_id_function=operation_id)
SIMILAR_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "no such seed user (`unknown_user`)"},
}
DISMISS_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "no such target user (`unknown_user`)"},
    409: {"model": ErrorBody, "description": "a user is being erased (`user_erasing`)"},
}


INTERACTIONS_MOST = 1_000  # the largest INTERACTIONS_MAX_BATCH may be


@router.post(
    "/v1/interactions",
    response_model=AcceptedBody,
    status_code=202,
    responses=ERRORS,
    tags=["people you may know"],
    summary="Record 1-1,000 interactions (messages, comments, likes, visits)",
    description="Service keys only: a key bound to a user is refused (403 "
    "`service_key_required`). Events between users unknown to the graph, or being erased, are "
    "dropped when applied; one (actor, target) pair gains at most INTERACTIONS_PAIR_DAILY_MAX "
    "weight per UTC day.",
    **guarded(Scope.WRITE, service_only=True),
)
async def record_interactions(
    events: Annotated[
        list[InteractionIn],
        # the schema refuses a longer list on its length, before validating its items
        Body(
            max_length=INTERACTIONS_MOST,
            json_schema_extra={"minItems": 1, **settings_extra(maxItems="interactions_max_batch")},
        ),
    ],
    request: Request,
) -> Response:
    accepted = await services_of(request).interactions.record(
        [Interaction(e.actor, e.target, e.kind, e.at) for e in events]
    )
    return FastJSON({"accepted": accepted}, status_code=202)


@router.get(
    "/v1/users/{user_id}/suggestions",
    response_model=SuggestionsBody,
    responses=ERRORS,
    tags=["people you may know"],
    summary="People the user may know, best first, with reasons",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.SUGGESTIONS),
)
async def get_suggestions(
    user_id: UserId,
    request: Request,
    limit: Annotated[
        int, Query(description="1-50", json_schema_extra={"minimum": 1, "maximum": 50})
    ] = 10,
) -> Response:
    found = await services_of(request).suggestions.recommend(user_id, limit)
    items = [s.as_json() for s in found.items]
    return FastJSON({"items": items, "recommendation_id": found.recommendation_id})


@router.get(
    "/v1/users/{user_id}/suggestions/similar/{seed_id}",
    response_model=SimilarBody,
    responses=ERRORS | SIMILAR_ERRORS,
    tags=["people you may know"],
    summary="Accounts similar to the seed (followed by its followers), for the user",
    description="What to show right after the user follows the seed: the accounts the seed's "
    "newest followers also follow, best first, with the same exclusions and privacy rules as "
    "the user's suggestions (the seed's followers are read only if the user may see them, "
    "each follower's follows likewise). The user's own view, as its suggestions are.",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.SUGGESTIONS),
)
async def get_similar(
    user_id: UserId,
    seed_id: SeedId,
    request: Request,
    limit: Annotated[
        int, Query(description="1-50", json_schema_extra={"minimum": 1, "maximum": 50})
    ] = 10,
) -> Response:
    found = await services_of(request).similar.similar(user_id, seed_id, limit)
    return FastJSON({"items": [s.as_json() for s in found]})


@router.delete(
    "/v1/users/{user_id}/suggestions/{target_id}",
    response_model=DismissBody,
    responses=ERRORS | DISMISS_ERRORS,
    tags=["people you may know"],
    summary="Never suggest the target to the user again",
    description="With a `recommendation_id`, a new dismissal counts for the ranker version "
    "of that suggestions answer.",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def dismiss_suggestion(
    user_id: UserId,
    target_id: TargetId,
    request: Request,
    recommendation_id: RecommendationId = None,
) -> DismissBody:
    suggestions = services_of(request).suggestions
    created = await suggestions.dismiss(user_id, target_id, recommendation_id)
    return DismissBody(dismissed=True, created=created)


@router.post(
    "/v1/users/{user_id}/suggestions/impressions",
    response_model=RecordedBody,
    status_code=202,
    responses=ERRORS,
    tags=["people you may know"],
    summary="Record which suggestions were shown",
    description="Each show beyond SUGGEST_IMPRESSIONS_FREE sinks the suggestion (all or "
    "nothing: a bad id records none). Only shows of users served to this user as suggestions "
    "within SUGGEST_SERVED_SECONDS count; others are ignored (`ignored`), as are shows past "
    "SUGGEST_IMPRESSIONS_MAX targets. With a `recommendation_id`, the shows counted count for "
    "the ranker version of that suggestions answer.",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def record_impressions(user_id: UserId, body: ImpressionsIn, request: Request) -> Response:
    impressions = services_of(request).impressions
    recorded, ignored = await impressions.record(user_id, body.ids, body.recommendation_id)
    return FastJSON({"recorded": recorded, "ignored": ignored}, status_code=202)


@router.get(
    "/v1/internal/users/{user_id}/affinities",
    response_model=AffinitiesBody,
    responses=ERRORS,
    tags=["internal"],
    summary="Whom the user is closest to, with affinity (internal: never shown to users)",
    **guarded(Scope.INTERNAL, cost=Cost.GRAPH),
)
async def get_affinities(
    user_id: UserId,
    request: Request,
    limit: Annotated[
        int, Query(description="1-1000", json_schema_extra={"minimum": 1, "maximum": 1000})
    ] = 20,
) -> Response:
    found = await services_of(request).interactions.affinities(user_id, limit)
    return FastJSON({"items": [{"user_id": u, "affinity": a} for u, a in found]})


@router.get(
    "/v1/internal/suggestions/report",
    response_model=SuggestionsReportBody,
    responses=ERRORS,
    tags=["internal"],
    summary="Online figures per ranker version, beside each one's offline precision@10",
    description="What `graphsvc ranker report` prints: per version of RANKER_MODEL_NAME, answers "
    "and items served, shows, follows and dismissals counted from recommendation ids, online "
    "precision (follows per item shown, per item served), and the stored model's precision@10 "
    "on its validation users.",
    **guarded(Scope.INTERNAL, cost=Cost.GRAPH),
)
async def get_suggestions_report(request: Request) -> Response:
    feedback = services_of(request).feedback
    versions = [figures.as_json() for figures in await feedback.report()]
    return FastJSON({"model": feedback.model, "versions": versions})


@router.get(
    "/v1/internal/users/{user_id}/suggestions/explain/{target_id}",
    response_model=ExplanationBody,
    responses=ERRORS,
    tags=["internal"],
    summary="Why the target is, or is not, suggested to the user (internal: features, "
    "weights and affinities are never shown to users)",
    **guarded(Scope.INTERNAL, cost=Cost.SUGGESTIONS),
)
async def explain_suggestion(user_id: UserId, target_id: TargetId, request: Request) -> Response:
    found = await services_of(request).suggestion_explainer.explain(user_id, target_id)
    return FastJSON(
        {
            "user_id": found.user_id,
            "target_id": found.target_id,
            "suggested": found.suggested,
            "rank": found.rank,
            "sources": found.sources,
            "excluded": found.excluded,
            "model_version": found.model_version,
            "features": [
                {
                    "name": c.name,
                    "raw": c.raw,
                    "transformed": c.transformed,
                    "weight": c.weight,
                    "contribution": c.contribution,
                }
                for c in found.features
            ],
            "intercept": found.intercept,
            "score": found.score,
            "probability": found.probability,
            "impressions": {"shows": found.shows, "factor": found.factor},
            "counts_hidden": found.counts_hidden,
        }
    )
