"""What routes take: path and query parameters, each with its bound and its documentation.

User ids are plain strings here: the services validate them, so the 422 names the parameter
(``target_id 'x y' is not a valid user id``) in the one error shape.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import BeforeValidator

from graphsvc.wire.schemas import (
    ID_SCHEMA,
    LIST_ID_SCHEMA,
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
ListId = Annotated[
    str, Path(description="a list id, as its creation answered", json_schema_extra=LIST_ID_SCHEMA)
]
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

# A follow's options (domain/follow_options.py): absent leaves an option as it is
Notify = Annotated[
    bool | None,
    Query(
        description="ring the bell: a `posted` notification for each of the target's posts "
        "(default false); absent leaves it as it is"
    ),
]
Reblogs = Annotated[
    bool | None,
    Query(
        description="the target's reblogs in the home timeline (default true); absent leaves "
        "it as it is"
    ),
]
Languages = Annotated[
    str | None,
    Query(
        description="comma-separated ISO 639 codes (at most 16): only the target's posts in "
        "these languages (and those without one) reach the home timeline; empty: every "
        "language (the default); absent leaves it as it is",
        json_schema_extra={"pattern": r"^([a-z]{2,3}(,[a-z]{2,3}){0,15})?$", "maxLength": 63},
    ),
]
