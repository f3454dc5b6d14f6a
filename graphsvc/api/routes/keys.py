"""Routes of API keys (the ``admin`` scope): create (the key is in this response only), list,
revoke. `graphsvc keys ...` does the same from a shell."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from graphsvc.api.http.access import guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.domain.access import ApiKey, Scope
from graphsvc.domain.model import iso_utc
from graphsvc.wire.schemas import ErrorBody, KeyRequest, KeysBody, NewKeyBody, RevokeBody

router = APIRouter(generate_unique_id_function=operation_id)

KeyId = Annotated[str, Path(description="a key's id (16 hex digits)", pattern=r"^[0-9a-f]{16}$")]


def _key_json(key: ApiKey) -> dict[str, object]:
    return {
        "id": key.id,
        "scopes": sorted(s.value for s in key.scopes),
        "user": key.user,
        "name": key.name,
        "created": iso_utc(key.created),
        "revoked": key.revoked,
    }


@router.post(
    "/v1/keys",
    response_model=NewKeyBody,
    status_code=201,
    responses=ERRORS
    | {409: {"model": ErrorBody, "description": "the user is being erased (`user_erasing`)"}},
    tags=["keys"],
    summary="Create an API key (the key is shown in this response only)",
    **guarded(Scope.ADMIN),
)
async def create_key(body: KeyRequest, request: Request) -> Response:
    new = await services_of(request).access.create(
        frozenset(body.scopes), user=body.user, name=body.name
    )
    return FastJSON({**_key_json(new.key), "key": new.token}, status_code=201)


@router.get(
    "/v1/keys",
    response_model=KeysBody,
    responses=ERRORS,
    tags=["keys"],
    summary="Every API key, newest first (never the keys themselves)",
    **guarded(Scope.ADMIN),
)
async def list_keys(request: Request) -> Response:
    keys = await services_of(request).access.list()
    return FastJSON({"items": [_key_json(k) for k in keys]})


@router.delete(
    "/v1/keys/{key_id}",
    response_model=RevokeBody,
    responses=ERRORS | {404: {"model": ErrorBody, "description": "no key has this id"}},
    tags=["keys"],
    summary="Revoke a key: every API process refuses it within API_KEY_CACHE_SECONDS",
    **guarded(Scope.ADMIN),
)
async def revoke_key(key_id: KeyId, request: Request) -> RevokeBody:
    changed = await services_of(request).access.revoke(key_id)
    return RevokeBody(id=key_id, revoked=True, changed=changed)
