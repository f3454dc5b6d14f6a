"""Routes of moderation: a user's status, and erasing a user."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from graphsvc.api.http.access import guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import UserId
from graphsvc.bootstrap import Serving
from graphsvc.domain.access import Scope
from graphsvc.domain.model import UserState
from graphsvc.wire.schemas import EraseBody, StatusBody, StatusRequest

router = APIRouter(generate_unique_id_function=operation_id)


async def _status_body(user_id: str, state: UserState | None, services: Serving) -> StatusBody:
    moderation = services.moderation
    progress = await moderation.progress(user_id) or await services.follow_requests.progress(
        user_id
    )
    return StatusBody(
        user_id=user_id,
        exists=state is not None,
        status=state.status if state else "active",
        fanout_pending=bool(state and state.propagation_pending),
        erasing=bool(state and state.erasing),
        approving_requests=bool(state and state.approving),
        progress=progress,
    )


@router.put(
    "/v1/users/{user_id}/status",
    response_model=StatusBody,
    responses=ERRORS,
    tags=["moderation"],
    summary="Set active, suspended or spam; dependent counts update in the background",
    **guarded(Scope.ADMIN),
)
async def set_status(user_id: UserId, body: StatusRequest, request: Request) -> StatusBody:
    services = services_of(request)
    state = await services.moderation.set_status(user_id, body.status)
    return await _status_body(user_id, state, services)


@router.get(
    "/v1/users/{user_id}/status",
    response_model=StatusBody,
    responses=ERRORS,
    tags=["moderation"],
    summary="A user's status, and whether a status propagation or erasure is still running",
    **guarded(Scope.ADMIN),
)
async def get_status(user_id: UserId, request: Request) -> StatusBody:
    services = services_of(request)
    return await _status_body(user_id, await services.moderation.user_state(user_id), services)


@router.delete(
    "/v1/users/{user_id}",
    response_model=EraseBody,
    status_code=202,
    responses=ERRORS | {200: {"model": EraseBody, "description": "no such user"}},
    tags=["moderation"],
    summary="Erase a user and every edge, in the background (see GET .../status)",
    description="Every API key bound to the user is revoked at once, also when the user is "
    "absent. The id stays taken (being erased) until its edges are gone and, when keys were "
    "revoked, until no API process may still trust one from its cache "
    "(max(API_KEY_CACHE_SECONDS, API_KEY_STALE_SECONDS) + 1 s); then it may be taken again.",
    **guarded(Scope.ADMIN),
)
async def erase_user(user_id: UserId, request: Request) -> Response:
    if await services_of(request).moderation.erase(user_id):
        return FastJSON({"user_id": user_id, "state": "erasing"}, status_code=202)
    return FastJSON({"user_id": user_id, "state": "absent"}, status_code=200)
