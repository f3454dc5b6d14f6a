"""Routes of audiences: a count, and pages, of the users an expression over users' lists names.
Their bodies carry the expression, so FastAPI's own handler reads them; each walks at most
AUDIENCE_SCAN_MAX entries per alternative (``Cost.COMMON``)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS, HIDDEN
from graphsvc.domain.access import Scope
from graphsvc.wire.schemas import AudienceCountBody, AudienceIn, AudiencePageBody, AudiencePageIn

router = APIRouter(generate_unique_id_function=operation_id)

_HOW = (
    "Each alternative of the expression walks its shortest list in id order and tests each "
    "entry against its other lists, reading at most AUDIENCE_SCAN_MAX entries. Every list "
    "named must be visible to the viewer (else 403 `network_hidden`); inactive users are "
    "left out. A bad expression is a 422 `invalid_audience` naming the part at fault."
)


@router.post(
    "/v1/audiences/count",
    response_model=AudienceCountBody,
    responses=ERRORS | HIDDEN,
    tags=["audiences"],
    summary="How many users an expression over lists names (e.g. followers of A and B, not C)",
    description=f"{_HOW} Exact within the bound; past it, `total` counts what was found "
    "(`total_is_lower_bound`) and `estimate` scales it to the lists walked.",
    **guarded(Scope.READ, cost=Cost.COMMON),
)
async def count_audience(body: AudienceIn, request: Request) -> FastJSON:
    found = await services_of(request).audiences.count(body.expr, viewer=viewer_of(request))
    return FastJSON(
        {
            "total": found.total,
            "total_is_lower_bound": not found.exact,
            "estimate": found.estimate,
            "examined": found.examined,
        }
    )


@router.post(
    "/v1/audiences/page",
    response_model=AudiencePageBody,
    responses=ERRORS | HIDDEN,
    tags=["audiences"],
    summary="The users an expression over lists names, in id order, a page at a time",
    description=f"{_HOW} A page that examined the bound without filling up is short, with a "
    "`next_cursor` where it stopped.",
    **guarded(Scope.READ, cost=Cost.COMMON),
)
async def page_audience(body: AudiencePageIn, request: Request) -> FastJSON:
    items, next_cursor = await services_of(request).audiences.page(
        body.expr, body.limit, body.cursor, viewer=viewer_of(request)
    )
    return FastJSON({"items": items, "next_cursor": next_cursor})
