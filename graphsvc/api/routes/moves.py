"""Routes of account moves: aliases, the move, and where it stands."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import TargetId, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.model import iso_utc
from graphsvc.domain.moves import MoveState
from graphsvc.wire.schemas import AliasBody, AliasesBody, ErrorBody, MoveBody, MoveIn, UnaliasBody

router = APIRouter(generate_unique_id_function=operation_id)
_MOVE_ERRORS = {
    **ERRORS,
    404: {"model": ErrorBody, "description": "unknown_user: the other account is not in the graph"},
    409: {
        "model": ErrorBody,
        "description": "move_refused: the target does not name the account as an alias, moved "
        "itself, is suspended or being erased, or the account moved less than "
        "MOVE_COOLDOWN_DAYS ago (with Retry-After); alias_limit",
    },
}


@router.put(
    "/v1/users/{user_id}/aliases/{target_id}",
    response_model=AliasBody,
    responses=_MOVE_ERRORS,
    tags=["moves"],
    summary="Name an account the user is also known as (it may then move to the user)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def add_alias(user_id: UserId, target_id: TargetId, request: Request) -> Response:
    created = await services_of(request).moves.alias(user_id, target_id)
    return FastJSON({"alias": True, "created": created})


@router.delete(
    "/v1/users/{user_id}/aliases/{target_id}",
    response_model=UnaliasBody,
    responses=ERRORS,
    tags=["moves"],
    summary="Stop naming an account as an alias (a move made stays made)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def remove_alias(user_id: UserId, target_id: TargetId, request: Request) -> Response:
    removed = await services_of(request).moves.unalias(user_id, target_id)
    return FastJSON({"alias": False, "removed": removed})


@router.get(
    "/v1/users/{user_id}/aliases",
    response_model=AliasesBody,
    responses=ERRORS,
    tags=["moves"],
    summary="The accounts the user is also known as",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def list_aliases(user_id: UserId, request: Request) -> Response:
    aliases = await services_of(request).moves.aliases(user_id)
    items = [{"user_id": alias, "since": iso_utc(since)} for alias, since in aliases]
    return FastJSON({"items": items})


@router.post(
    "/v1/users/{user_id}/move",
    response_model=MoveBody,
    status_code=202,
    responses={**_MOVE_ERRORS, 200: {"model": MoveBody, "description": "the move in effect"}},
    tags=["moves"],
    summary="Move the account: its followers follow the target instead, in the background",
    description="The target must name the account as an alias first. The account is marked "
    "moved at once; the worker makes each follower follow the target with the options of its "
    "follow (a request when the target is locked) and leave the account, and, once all are "
    "moved, puts a `severed` notice (how many followers the move took) on the change feed. A "
    "repeat of the move in effect changes nothing (200).",
    **guarded(Scope.WRITE, acts_as_user=True, cost=Cost.GRAPH),
)
async def move(user_id: UserId, body: MoveIn, request: Request) -> Response:
    state, created = await services_of(request).moves.move(user_id, body.target)
    return FastJSON(move_body(state, created), status_code=202 if created else 200)


@router.get(
    "/v1/users/{user_id}/move",
    response_model=MoveBody,
    responses=ERRORS,
    tags=["moves"],
    summary="Where the account's move stands (the owner's view)",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.GRAPH),
)
async def get_move(user_id: UserId, request: Request) -> Response:
    return FastJSON(move_body(await services_of(request).moves.state(user_id)))


def move_body(state: MoveState, created: bool | None = None) -> dict[str, Any]:
    kind = "none" if state.moved_to is None else "moving" if state.moving else "done"
    body: dict[str, Any] = {
        "moved_to": state.moved_to,
        "moved_at": iso_utc(state.moved_at) if state.moved_at is not None else None,
        "state": kind,
        "followers_moved": state.moved,
    }
    if created is not None:
        body["created"] = created
    return body
