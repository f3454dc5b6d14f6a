"""Routes of lists: followers, following, friends, counts, common and familiar lists, and a
user's own blocks.

Each declares what a request costs of the key's budget (``access.Cost``): a page or the
counts from the mirror one request, a page Neo4j serves (past the hot list) five, friends and
familiar followers (a read of the user's followings) ten, common lists twenty, a page of
blocks (Neo4j's) five.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON, counts_body, familiar_body, id_page_body, page_body
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS, HIDDEN, OWNER_ERRORS
from graphsvc.api.http.lean import LeanRoute
from graphsvc.api.http.params import (
    Cursor,
    Limit,
    OtherId,
    SinceAfter,
    SinceBefore,
    TargetId,
    UserId,
)
from graphsvc.domain.access import Scope
from graphsvc.domain.time_window import TimeWindow
from graphsvc.wire.schemas import (
    CountsBody,
    DistanceBody,
    FamiliarManyBody,
    IdPageBody,
    PageBody,
    settings_extra,
)

router = APIRouter(route_class=LeanRoute, generate_unique_id_function=operation_id)


@router.get(
    "/v1/users/{user_id}/followers",
    response_model=PageBody,
    responses=ERRORS | HIDDEN,
    tags=["pages"],
    summary="Who follows the user, newest first (active users only)",
    **guarded(Scope.READ, cost=Cost.MIRROR, graph_cost=Cost.GRAPH),
)
async def list_followers(
    user_id: UserId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
    not_followed_back: Annotated[
        bool, Query(description="only followers the user does not follow")
    ] = False,
    since_after: SinceAfter = None,
    since_before: SinceBefore = None,
) -> Response:
    page = await services_of(request).follow_pages.followers(
        user_id,
        limit,
        cursor,
        viewer=viewer_of(request),
        not_followed_back=not_followed_back,
        window=TimeWindow.of(since_after, since_before),
    )
    return page_body(page)


@router.get(
    "/v1/users/{user_id}/following",
    response_model=PageBody,
    responses=ERRORS | HIDDEN,
    tags=["pages"],
    summary="Whom the user follows, newest first (active users only)",
    **guarded(Scope.READ, cost=Cost.MIRROR, graph_cost=Cost.GRAPH),
)
async def list_following(
    user_id: UserId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
    not_following_back: Annotated[
        bool, Query(description="only those who do not follow the user")
    ] = False,
    celebrities_only: Annotated[
        bool,
        Query(
            description="only users with at least CELEBRITY_FOLLOWERS followers (a user whose "
            "counts are hidden from the viewer is never one)"
        ),
    ] = False,
    since_after: SinceAfter = None,
    since_before: SinceBefore = None,
) -> Response:
    page = await services_of(request).follow_pages.following(
        user_id,
        limit,
        cursor,
        viewer=viewer_of(request),
        not_following_back=not_following_back,
        celebrities_only=celebrities_only,
        window=TimeWindow.of(since_after, since_before),
    )
    return page_body(page)


@router.get(
    "/v1/users/{user_id}/friends",
    response_model=PageBody,
    responses=ERRORS | HIDDEN,
    tags=["pages"],
    summary="Active mutual follows, by when the user followed them, newest first",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.FOLLOWINGS),
)
async def list_friends(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> Response:
    friends = services_of(request).graph_pages.friends
    return page_body(await friends(user_id, limit, cursor, viewer=viewer_of(request)))


@router.get(
    "/v1/users/{user_id}/blocks",
    response_model=PageBody,
    responses=ERRORS | OWNER_ERRORS,
    tags=["blocks"],
    summary="Whom the user blocks, newest block first (its owner's alone)",
    description="Read by the user itself: a key bound to it, or a service key naming it in "
    "X-Graph-Viewer; an admin or internal key that names no viewer reads any user's. Anyone "
    "else: 403 `owner_only`.",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.GRAPH),
)
async def list_blocks(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> Response:
    graph_pages = services_of(request).graph_pages
    return page_body(await graph_pages.blocks(user_id, limit, cursor, viewer=viewer_of(request)))


@router.get(
    "/v1/users/{user_id}/counts",
    response_model=CountsBody,
    responses=ERRORS,
    tags=["pages"],
    summary="Exact counts: totals, active users only, friends",
    **guarded(Scope.READ),
)
async def get_counts(user_id: UserId, request: Request) -> Response:
    pages = services_of(request).follow_pages
    return counts_body(pages, await pages.counts_for(user_id, viewer_of(request)))


@router.get(
    "/v1/users/{user_id}/common-following/{other_id}",
    response_model=IdPageBody,
    responses=ERRORS | HIDDEN,
    tags=["relations"],
    summary="Active users both follow, in id order, with the total",
    **guarded(Scope.READ, cost=Cost.COMMON),
)
async def list_common_following(
    user_id: UserId,
    other_id: OtherId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Response:
    return id_page_body(
        await services_of(request).graph_pages.common_following(
            user_id, other_id, limit, cursor, viewer=viewer_of(request)
        )
    )


@router.get(
    "/v1/users/{user_id}/common-followers/{other_id}",
    response_model=IdPageBody,
    responses=ERRORS | HIDDEN,
    tags=["relations"],
    summary="Active users who follow both, in id order, with the total",
    **guarded(Scope.READ, cost=Cost.COMMON),
)
async def list_common_followers(
    user_id: UserId,
    other_id: OtherId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Response:
    return id_page_body(
        await services_of(request).graph_pages.common_followers(
            user_id, other_id, limit, cursor, viewer=viewer_of(request)
        )
    )


@router.get(
    "/v1/users/{user_id}/distance/{target_id}",
    response_model=DistanceBody,
    responses=ERRORS,
    tags=["relations"],
    summary="Degrees of connection: 1, 2 or 3 follows from the user to the target, or more",
    description="A search from both ends over the follows the viewer may see (a follow "
    "counts when the follower's following or the followed user's followers are visible to "
    "it), widening the cheaper side each step, that never reads more than DISTANCE_EDGES_MAX "
    "follows: when the next step would, it stops and answers `exact: false`.",
    **guarded(Scope.READ, cost=Cost.FOLLOWINGS),
)
async def get_distance(user_id: UserId, target_id: TargetId, request: Request) -> Response:
    found = await services_of(request).distances.distance(
        user_id, target_id, viewer=viewer_of(request)
    )
    return FastJSON(
        {"distance": found.distance, "exact": found.exact, "edges_read": found.edges_read}
    )


@router.get(
    "/v1/users/{user_id}/familiar-followers",
    response_model=FamiliarManyBody,
    responses=ERRORS | HIDDEN,
    tags=["relations"],
    summary="For many targets at once: people the user follows who follow each",
    description="One call for a page of profile cards or search results: per target, how "
    "many the user follows who follow it, and the first FAMILIAR_SHOWN_MAX (newest follow "
    "first). The viewer must see the user's following (else 403 `network_hidden`); a target "
    "whose followers are hidden from it answers `hidden: true` and no count. Each name is "
    "of someone whose following the viewer may see. One budget charge for the call.",
    **guarded(Scope.READ, cost=Cost.FOLLOWINGS),
)
async def list_familiar_followers_many(
    user_id: UserId,
    request: Request,
    ids: Annotated[
        str,
        Query(
            description="comma-separated target ids, 1 to FAMILIAR_MAX_IDS (no spaces)",
            json_schema_extra=settings_extra(id_list="familiar_max_ids"),
        ),
    ],
) -> Response:
    targets = ids.split(",") if ids else []
    found = await services_of(request).graph_pages.familiar_followers_many(
        user_id, targets, viewer=viewer_of(request)
    )
    return FastJSON({"familiar": {f.target: familiar_body(f) for f in found}})


@router.get(
    "/v1/users/{user_id}/familiar-followers/{target_id}",
    response_model=IdPageBody,
    responses=ERRORS | HIDDEN,
    tags=["relations"],
    summary="People the user follows who follow the target ('Followed by A, B and 12 others')",
    **guarded(Scope.READ, cost=Cost.FOLLOWINGS),
)
async def list_familiar_followers(
    user_id: UserId, target_id: TargetId, request: Request, limit: Limit = None
) -> Response:
    return id_page_body(
        await services_of(request).graph_pages.familiar_followers(
            user_id, target_id, limit, viewer=viewer_of(request)
        )
    )
