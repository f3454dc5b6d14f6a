"""Routes of follow requests: the requests made to a locked user and by a user, approving,
rejecting, and approving them all (withdrawing is an unfollow: ``relations.py``).

Each list is its owner's own: only the user (a key bound to it, or a service key naming it as
the viewer) or an admin or internal key naming no one reads it (403 ``owner_only``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON, page_body
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS, FOLLOW_ERRORS
from graphsvc.api.http.params import Cursor, Limit, TargetId, UserId
from graphsvc.domain.access import Scope
from graphsvc.wire.schemas import ApproveAllBody, ErrorBody, FollowRequestBody, PageBody

router = APIRouter(generate_unique_id_function=operation_id)
OWNER_ONLY = {403: {"model": ErrorBody, "description": "owner_only: the list is the user's own"}}
NO_REQUEST = {404: {"model": ErrorBody, "description": "no_follow_request: none is pending"}}


@router.get(
    "/v1/users/{user_id}/follow-requests",
    response_model=PageBody,
    responses=ERRORS | OWNER_ONLY,
    tags=["follow requests"],
    summary="The follow requests waiting for the user's answer, newest first",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.GRAPH),
)
async def list_follow_requests(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> Response:
    requests = services_of(request).follow_requests
    return page_body(await requests.incoming(user_id, viewer_of(request), limit, cursor))


@router.get(
    "/v1/users/{user_id}/follow-requests/sent",
    response_model=PageBody,
    responses=ERRORS | OWNER_ONLY,
    tags=["follow requests"],
    summary="The follow requests the user made that still wait, newest first",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.GRAPH),
)
async def list_sent_follow_requests(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> Response:
    requests = services_of(request).follow_requests
    return page_body(await requests.sent(user_id, viewer_of(request), limit, cursor))


@router.put(
    "/v1/users/{user_id}/follow-requests/{target_id}",
    response_model=FollowRequestBody,
    responses=ERRORS | FOLLOW_ERRORS | NO_REQUEST,
    tags=["follow requests"],
    summary="Approve the pending request of target_id: it follows the user now (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def approve_follow_request(
    user_id: UserId, target_id: TargetId, request: Request
) -> FollowRequestBody:
    created = await services_of(request).relations.approve(user_id, target_id)
    return FollowRequestBody(following=True, created=created)


@router.delete(
    "/v1/users/{user_id}/follow-requests/{target_id}",
    response_model=FollowRequestBody,
    responses=ERRORS,
    tags=["follow requests"],
    summary="Reject the pending request of target_id (it is not told; idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def reject_follow_request(
    user_id: UserId, target_id: TargetId, request: Request
) -> FollowRequestBody:
    removed = await services_of(request).relations.reject(user_id, target_id)
    return FollowRequestBody(following=False, removed=removed)


@router.post(
    "/v1/users/{user_id}/follow-requests/approve-all",
    response_model=ApproveAllBody,
    status_code=202,
    responses=ERRORS,
    tags=["follow requests"],
    summary="Approve every pending request, in the background (progress: GET .../status)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def approve_all_follow_requests(user_id: UserId, request: Request) -> Response:
    pending = await services_of(request).follow_requests.approve_all(user_id)
    return FastJSON({"approving": True, "pending": pending}, status_code=202)
