"""Routes of portable relations: a user's exports (Mastodon's CSV, or JSON) and imports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.errors import ImportNotFound
from graphsvc.domain.portable import ImportRecord, Kind, Mode, render_csv, render_json
from graphsvc.wire.schemas import ErrorBody, ExportBody, ImportBody

router = APIRouter(generate_unique_id_function=operation_id)

KindParam = Annotated[
    Kind, Path(description="following, blocks, mutes or lists (Mastodon's four exports)")
]
# Mastodon's file names, so a file saved from here is the file a Mastodon server imports
FILE_NAMES = {
    Kind.FOLLOWING: "following_accounts.csv",
    Kind.BLOCKS: "blocked_accounts.csv",
    Kind.MUTES: "muted_accounts.csv",
    Kind.LISTS: "lists.csv",
}
_IMPORT_BODY = {
    "required": True,
    "description": "the file: Mastodon's CSV of this kind (text/csv; a header row optional), "
    "or a JSON array of rows as the JSON export writes them (application/json); at most "
    "IMPORT_MAX_ROWS rows and IMPORT_MAX_BYTES bytes",
    "content": {
        "text/csv": {"schema": {"description": "Mastodon's CSV file of the kind"}},
        "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
    },
}

# the import's guard, with its body documented beside the scope and cost (read raw, not parsed)
_IMPORT_GUARD = guarded(Scope.WRITE, acts_as_user=True, cost=Cost.FOLLOWINGS)
_IMPORT_GUARD["openapi_extra"] = {**_IMPORT_GUARD["openapi_extra"], "requestBody": _IMPORT_BODY}


@router.get(
    "/v1/users/{user_id}/exports/{kind}",
    response_model=ExportBody,
    responses={**ERRORS, 200: {"content": {"text/csv": {}}, "description": "the export"}},
    tags=["portable"],
    summary="Export the user's follows, blocks, mutes or lists (Mastodon's CSV, or JSON)",
    description="The user's own: every entry of the kind, newest first, as its lists show "
    "them (suspended and spam users left out). `format=csv` (the default) writes Mastodon's "
    "file of that kind byte for byte; `format=json` the same rows as objects.",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.FOLLOWINGS),
)
async def export_relations(
    user_id: UserId,
    kind: KindParam,
    request: Request,
    format: Annotated[
        Literal["csv", "json"], Query(description="csv (Mastodon's format) or json")
    ] = "csv",
) -> Response:
    entries = await services_of(request).exports.entries(user_id, kind)
    if format == "json":
        return FastJSON({"kind": kind.value, "items": render_json(kind, entries)})
    disposition = f'attachment; filename="{FILE_NAMES[kind]}"'
    return Response(
        render_csv(kind, entries),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": disposition},
    )


@router.post(
    "/v1/users/{user_id}/imports/{kind}",
    response_model=ImportBody,
    status_code=202,
    responses={
        **ERRORS,
        200: {"model": ImportBody, "description": "the same import again: its record"},
        413: {"model": ErrorBody, "description": "a body over IMPORT_MAX_BYTES"},
    },
    tags=["portable"],
    summary="Import follows, blocks, mutes or lists from a file, in the background",
    description="The file is read at once (a body that is no CSV or JSON of the kind, or "
    "holds more than IMPORT_MAX_ROWS rows, is a 422 `invalid_import` and changes nothing); "
    "its malformed rows are refused there and then, the others applied by the worker through "
    "the same rules as the API's writes, each refusal named in the import's record. `merge` "
    "adds what the file holds; `overwrite` also removes the user's entries of the kind the "
    "file does not hold (of those its lists show). The same import sent again is the same "
    "import (200, its record).",
    **_IMPORT_GUARD,
)
async def import_relations(
    user_id: UserId,
    kind: KindParam,
    request: Request,
    mode: Annotated[Mode, Query(description="merge (the default) or overwrite")] = Mode.MERGE,
) -> Response:
    media_type = request.headers.get("content-type", "text/csv").split(";")[0].strip().lower()
    body = await request.body()
    record, created = await services_of(request).imports.submit(
        user_id, kind, mode, body, media_type
    )
    return FastJSON(import_body(record), status_code=202 if created else 200)


@router.get(
    "/v1/users/{user_id}/imports/{kind}/{import_id}",
    response_model=ImportBody,
    responses={**ERRORS, 404: {"model": ErrorBody, "description": "no such import (or expired)"}},
    tags=["portable"],
    summary="An import's progress and result: each refused row and why",
    **guarded(Scope.READ, acts_as_user=True),
)
async def get_import(
    user_id: UserId,
    kind: KindParam,
    import_id: Annotated[
        str,
        Path(
            description="the id its import answered",
            json_schema_extra={"pattern": "^[0-9a-f]{20}$"},
        ),
    ],
    request: Request,
) -> Response:
    record = await services_of(request).imports.status(user_id, import_id)
    if record.kind is not kind:
        raise ImportNotFound(f"user {user_id!r} has no {kind} import {import_id!r}")
    return FastJSON(import_body(record))


def import_body(record: ImportRecord) -> dict[str, Any]:
    body = record.as_dict()
    body.pop("position")
    return body
