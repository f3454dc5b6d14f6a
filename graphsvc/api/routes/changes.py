"""Routes of a user's lists over time: the changes (who followed and unfollowed, oldest first,
since a moment) and the growth series (gained, lost and total per bucket). Each a Neo4j read
bounded by its page or its span (``Cost.GRAPH``)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS, HIDDEN
from graphsvc.api.http.lean import LeanRoute
from graphsvc.api.http.params import Cursor, Limit, Moment, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.changes import ChangePage
from graphsvc.domain.model import Side, iso_utc
from graphsvc.services.series import Series
from graphsvc.wire.schemas import ChangePageBody, SeriesBody

router = APIRouter(route_class=LeanRoute, generate_unique_id_function=operation_id)

Since = Annotated[
    Moment | None,
    Query(
        description="ISO-8601 moment (UTC when no zone is given): the changes at or after it; "
        "absent, every change kept (CHANGES_RETENTION_DAYS). Not with a cursor",
    ),
]
_HOW = (
    "Follows made and ended, oldest first: `op` `follow` or `unfollow`, with the other user "
    "and when. Changes of the last CHANGES_SETTLE_SECONDS are not listed yet (they may still "
    "be committing); every page's `next_cursor` resumes after it, now or later, so a client "
    "polls with it and sees every change once. Inactive users are left out, as the lists "
    "leave them out; an erased user leaves no change behind. A `since` older than "
    "CHANGES_RETENTION_DAYS is a 400 `since_too_old`; since and cursor together a 400 "
    "`invalid_time_range`."
)


@router.get(
    "/v1/users/{user_id}/followers/changes",
    response_model=ChangePageBody,
    responses=ERRORS | HIDDEN,
    tags=["changes"],
    summary="Who followed and who unfollowed the user since a moment, oldest first",
    description=_HOW,
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def follower_changes(
    user_id: UserId,
    request: Request,
    since: Since = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Response:
    changes = services_of(request).changes
    page = await changes.page(
        Side.FOLLOWERS, user_id, since=since, limit=limit, cursor=cursor, viewer=viewer_of(request)
    )
    return change_body(page)


@router.get(
    "/v1/users/{user_id}/following/changes",
    response_model=ChangePageBody,
    responses=ERRORS | HIDDEN,
    tags=["changes"],
    summary="Whom the user followed and unfollowed since a moment, oldest first",
    description=_HOW,
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def following_changes(
    user_id: UserId,
    request: Request,
    since: Since = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Response:
    changes = services_of(request).changes
    page = await changes.page(
        Side.FOLLOWING, user_id, since=since, limit=limit, cursor=cursor, viewer=viewer_of(request)
    )
    return change_body(page)


def change_body(page: ChangePage) -> FastJSON:
    items = [
        {"at": iso_utc(c.at), "user_id": c.user_id, "op": c.op, "cause": c.cause}
        for c in page.items
    ]
    return FastJSON({"items": items, "next_cursor": page.next_cursor, "more": page.more})


Bucket = Annotated[
    Literal["second", "minute", "hour", "day"],
    Query(description="the buckets' width (UTC minutes, hours and days)"),
]
From = Annotated[
    Moment | None,
    Query(
        alias="from",
        description="ISO-8601 moment in the first bucket (UTC when no zone is given); absent: "
        "a minute of seconds, an hour of minutes, a week of hours or a month of days before "
        "`to`",
    ),
]
To = Annotated[
    Moment | None,
    Query(alias="to", description="ISO-8601 moment in the last bucket; absent or later: now"),
]
_SERIES = (
    "Per bucket, the follows gained and lost and the total at the bucket's end (the last "
    "bucket's total is the count now), every bucket of the span, oldest first. Read from "
    "the follows and their ends, as the changes are; a span reaches back "
    "CHANGES_RETENTION_DAYS at most and SERIES_BUCKETS_MAX buckets from its start to now "
    "(else a 400). The totals are the user's counts over time: a user hiding its counts "
    "from the viewer is a 403 `network_hidden`."
)


@router.get(
    "/v1/users/{user_id}/followers/series",
    response_model=SeriesBody,
    responses=ERRORS | HIDDEN,
    tags=["changes"],
    summary="Followers gained, lost and total per second, minute, hour or day",
    description=_SERIES,
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def follower_series(
    user_id: UserId,
    request: Request,
    bucket: Bucket = "hour",
    start: From = None,
    end: To = None,
) -> Response:
    growth = services_of(request).growth_series
    found = await growth.series(
        Side.FOLLOWERS, user_id, bucket, start=start, end=end, viewer=viewer_of(request)
    )
    return series_body(found)


@router.get(
    "/v1/users/{user_id}/following/series",
    response_model=SeriesBody,
    responses=ERRORS | HIDDEN,
    tags=["changes"],
    summary="Follows made, ended and total per second, minute, hour or day",
    description=_SERIES,
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def following_series(
    user_id: UserId,
    request: Request,
    bucket: Bucket = "hour",
    start: From = None,
    end: To = None,
) -> Response:
    growth = services_of(request).growth_series
    found = await growth.series(
        Side.FOLLOWING, user_id, bucket, start=start, end=end, viewer=viewer_of(request)
    )
    return series_body(found)


def series_body(series: Series) -> FastJSON:
    items = [
        {"start": iso_utc(b.start), "gained": b.gained, "lost": b.lost, "total": b.total}
        for b in series.buckets
    ]
    return FastJSON({"bucket": series.bucket, "items": items})
