"""Routes of people you may know: interactions, suggestions, dismissals, impressions, and the
internal affinities."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import Response

from graphsvc.api.access import guarded
from graphsvc.api.errors import ERRORS
from graphsvc.api.params import (
    FastJSON,
    TargetId,
    UserId,
    api_key_of,
    services_of,
)
from graphsvc.domain.access import Scope, authorize
from graphsvc.domain.model import Interaction
from graphsvc.schemas import (
    AcceptedBody,
    AffinitiesBody,
    DismissBody,
    ImpressionsIn,
    InteractionIn,
    RecordedBody,
    SuggestionsBody,
    settings_extra,
)

router = APIRouter()


@router.post(
    "/v1/interactions",
    response_model=AcceptedBody,
    status_code=202,
    responses=ERRORS,
    tags=["people you may know"],
    summary="Record 1-1,000 interactions (messages, comments, likes, visits)",
    **guarded(Scope.WRITE),
)
async def interactions(
    events: Annotated[
        list[InteractionIn],
        Body(
            json_schema_extra={"minItems": 1, **settings_extra(maxItems="interactions_max_batch")}
        ),
    ],
    request: Request,
) -> Response:
    for actor in {e.actor for e in events}:  # a user-bound key records only its user's acts
        authorize(api_key_of(request), Scope.WRITE, actor)
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
    **guarded(Scope.READ),
)
async def suggestions(
    user_id: UserId,
    request: Request,
    limit: Annotated[
        int, Query(description="1-50", json_schema_extra={"minimum": 1, "maximum": 50})
    ] = 10,
) -> Response:
    found = await services_of(request).suggestions.suggestions(user_id, limit)
    return FastJSON({"items": [s.as_json() for s in found]})


@router.delete(
    "/v1/users/{user_id}/suggestions/{target_id}",
    response_model=DismissBody,
    responses=ERRORS,
    tags=["people you may know"],
    summary="Never suggest the target to the user again",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def dismiss(user_id: UserId, target_id: TargetId, request: Request) -> DismissBody:
    created = await services_of(request).suggestions.dismiss(user_id, target_id)
    return DismissBody(dismissed=True, created=created)


@router.post(
    "/v1/users/{user_id}/suggestions/impressions",
    response_model=RecordedBody,
    status_code=202,
    responses=ERRORS,
    tags=["people you may know"],
    summary="Record which suggestions were shown",
    description="Each show beyond SUGGEST_IMPRESSIONS_FREE sinks the suggestion (all or "
    "nothing: a bad id records none).",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def impressions(user_id: UserId, body: ImpressionsIn, request: Request) -> Response:
    recorded = await services_of(request).impressions.record(user_id, body.ids)
    return FastJSON({"recorded": recorded}, status_code=202)


@router.get(
    "/v1/internal/users/{user_id}/affinities",
    response_model=AffinitiesBody,
    responses=ERRORS,
    tags=["internal"],
    summary="Whom the user is closest to, with affinity (internal: never shown to users)",
    **guarded(Scope.INTERNAL),
)
async def affinities(
    user_id: UserId,
    request: Request,
    limit: Annotated[
        int, Query(description="1-1000", json_schema_extra={"minimum": 1, "maximum": 1000})
    ] = 20,
) -> Response:
    found = await services_of(request).interactions.affinities(user_id, limit)
    return FastJSON({"items": [{"user_id": u, "affinity": a} for u, a in found]})
