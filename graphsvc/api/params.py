"""What routes take and give: path and query parameters, the services a route calls
(``services_of``), and the list bodies several routers share.

User ids are plain strings here: the services validate them, so the 422 names the parameter
(``target_id 'x y' is not a valid user id``) in the one error shape.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import Path, Query, Request
from fastapi.responses import Response
from pydantic import BeforeValidator

from graphsvc.api.access import VIEWER
from graphsvc.bootstrap import Services
from graphsvc.domain.access import ApiKey
from graphsvc.domain.model import (
    EdgeChange,
    Familiar,
    FollowResult,
    IdPage,
    Page,
    ShownCounts,
    iso_utc,
)
from graphsvc.domain.privacy import Viewer
from graphsvc.services.lists import Lists
from graphsvc.wire.schemas import (
    ID_SCHEMA,
    RECOMMENDATION_ID_DOC,
    RECOMMENDATION_ID_SCHEMA,
    settings_extra,
)

_ID_DOC = "1-64 characters from [A-Za-z0-9_.-]"
UserId = Annotated[str, Path(description=_ID_DOC, json_schema_extra=ID_SCHEMA)]
TargetId = Annotated[str, Path(description=_ID_DOC, json_schema_extra=ID_SCHEMA)]
OtherId = Annotated[str, Path(description=_ID_DOC, json_schema_extra=ID_SCHEMA)]
FollowerId = Annotated[str, Path(description=_ID_DOC, json_schema_extra=ID_SCHEMA)]
SeedId = Annotated[str, Path(description=_ID_DOC, json_schema_extra=ID_SCHEMA)]
Limit = Annotated[
    int | None,
    Query(
        description="page size, 1-PAGE_LIMIT_MAX (default PAGE_LIMIT_DEFAULT)",
        json_schema_extra={"minimum": 1, **settings_extra(maximum="page_limit_max")},
    ),
]
Cursor = Annotated[
    str | None,
    Query(
        description="next_cursor of the previous page (opaque; a tampered one is a 400); "
        "empty or absent for the first page",
        json_schema_extra={"pattern": r"^([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?$", "maxLength": 512},
    ),
]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _iso_only(value: Any) -> Any:
    """Pydantic reads a number as seconds since the epoch; the contract says ISO-8601, so a
    number is refused, as the OpenAPI document (format date-time) promises."""
    if isinstance(value, str) and not _ISO_DATE.match(value):
        raise ValueError("an ISO-8601 date-time, e.g. 2026-11-28T10:00:00Z, is expected")
    return value


# A moment in a query: ISO-8601 only (UTC when no zone is given).
Moment = Annotated[datetime, BeforeValidator(_iso_only)]

SinceAfter = Annotated[
    Moment | None,
    Query(description="only follows made after this ISO-8601 moment (UTC when no zone is given)"),
]
SinceBefore = Annotated[
    Moment | None,
    Query(description="only follows made before this ISO-8601 moment (UTC when no zone is given)"),
]

RecommendationId = Annotated[
    str | None,
    Query(description=RECOMMENDATION_ID_DOC, json_schema_extra=RECOMMENDATION_ID_SCHEMA),
]

# -- the services a route calls ---------------------------------------------------------------


def services_of(request: Request) -> Services:
    """The services the app serves with (opened by its lifespan, or given to ``create_app``).

    A plain call rather than a FastAPI dependency: dependency injection cost a noticeable
    share of a read's CPU, for nothing a route needs (docs/performance.md, "Where a request's
    CPU goes")."""
    return request.app.state.services


def api_key_of(request: Request) -> ApiKey:
    """The key that was checked for this request (set by ``access.admit``)."""
    return request.scope["state"]["api_key"]


def viewer_of(request: Request) -> Viewer:
    """Who reads (``domain.privacy.Viewer``), as ``access.admit`` found it from the key and
    the ``X-Graph-Viewer`` header."""
    return request.scope["state"][VIEWER]


# -- bodies -------------------------------------------------------------------------------------


class FastJSON(Response):
    """JSON by orjson, for bodies the route already shaped (no second validation pass)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def page_body(page: Page) -> FastJSON:
    items = [{"user_id": e.user_id, "since": iso_utc(e.since)} for e in page.items]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})


def follow_body(result: FollowResult) -> FastJSON:
    """A follow's answer: 200 for a follow, 202 for a request waiting for approval."""
    body = {"following": result.following, "requested": result.requested, "created": result.created}
    return FastJSON(body, status_code=202 if result.requested else 200)


def unfollow_body(change: EdgeChange | None) -> FastJSON:
    removed = change is not None and change.changed
    withdrawn = change is not None and change.withdrawn
    return FastJSON({"following": False, "removed": removed, "withdrawn": withdrawn})


def counts_body(lists: Lists, shown: ShownCounts) -> FastJSON:
    """The counts as the viewer may see them (hidden: every count null)."""
    counts = shown.counts
    if counts is None:
        return FastJSON(
            {
                "followers": None,
                "following": None,
                "followers_active": None,
                "following_active": None,
                "friends": None,
                "celebrity": None,
                "pending_requests": shown.pending_requests,
                "counts_hidden": True,
            }
        )
    return FastJSON(
        {
            "followers": counts.followers,
            "following": counts.following,
            "followers_active": counts.followers_active,
            "following_active": counts.following_active,
            "friends": counts.friends,
            "celebrity": lists.is_celebrity(counts),
            "pending_requests": shown.pending_requests,
            "counts_hidden": False,
        }
    )


def familiar_body(familiar: Familiar) -> dict[str, Any]:
    """One target's familiar followers (a FamiliarBody): no count where they are hidden."""
    return {
        "total": familiar.total,
        "items": familiar.user_ids,
        "hidden": familiar.total is None,
    }


def id_page_body(page: IdPage) -> FastJSON:
    return FastJSON(
        {
            "total": page.total,
            "items": page.user_ids,
            "next_cursor": page.next_cursor,
            "total_is_lower_bound": page.total_is_lower_bound,
        }
    )
