"""Routes of mutes: mute (with options), unmute, and the user's own list of mutes.

A mute is the muter's private view: only the muter's key writes it, and only the muter (or
an operator's key naming no other viewer) reads the list (403 ``owner_only``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import Cursor, Limit, TargetId, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.model import iso_utc
from graphsvc.domain.privacy import require_owner
from graphsvc.wire.schemas import ErrorBody, MuteBody, MuteIn, MutesBody, UnmuteBody

router = APIRouter(generate_unique_id_function=operation_id)

MUTE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    403: {"model": ErrorBody, "description": "a user cannot mute itself (self_action)"},
    409: {"model": ErrorBody, "description": "MAX_MUTES reached, or a user is being erased"},
    422: {
        "model": ErrorBody,
        "description": "invalid user id, or duration_seconds past MUTE_MAX_SECONDS",
    },
}


def _expires(until: int | None) -> str | None:
    return iso_utc(until) if until is not None else None


@router.put(
    "/v1/users/{user_id}/mutes/{target_id}",
    response_model=MuteBody,
    responses=MUTE_ERRORS,
    tags=["mutes"],
    summary="Mute a user, or set the options of the mute (idempotent; private to the muter)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def mute(
    user_id: UserId, target_id: TargetId, request: Request, body: MuteIn | None = None
) -> MuteBody:
    options = body or MuteIn()
    change = await services_of(request).mutes.mute(
        user_id,
        target_id,
        notifications=options.notifications,
        duration_seconds=options.duration_seconds,
    )
    return MuteBody(
        muting=True,
        created=change.created,
        expires_at=_expires(change.until),
        notifications=change.notifications,
    )


@router.delete(
    "/v1/users/{user_id}/mutes/{target_id}",
    response_model=UnmuteBody,
    responses=MUTE_ERRORS,
    tags=["mutes"],
    summary="Unmute a user (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unmute(user_id: UserId, target_id: TargetId, request: Request) -> UnmuteBody:
    removed = await services_of(request).mutes.unmute(user_id, target_id)
    return UnmuteBody(muting=False, removed=removed)


@router.get(
    "/v1/users/{user_id}/mutes",
    response_model=MutesBody,
    responses={**ERRORS, 403: {"model": ErrorBody, "description": "not the owner (owner_only)"}},
    tags=["mutes"],
    summary="The user's mutes in effect, newest first (the owner only)",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def list_mutes(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> FastJSON:
    require_owner(viewer_of(request), user_id, "mutes")
    page = await services_of(request).mutes.mutes(user_id, limit, cursor)
    items = [
        {
            "user_id": m.user_id,
            "since": iso_utc(m.since),
            "expires_at": _expires(m.until),
            "notifications": m.notifications,
        }
        for m in page.items
    ]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})  # MutesBody
