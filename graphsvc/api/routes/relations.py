"""Routes of relations: follow, unfollow, the removal of followers, block, unblock, and
relationships in one call."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import (
    FastJSON,
    familiar_body,
    follow_body,
    options_body,
    unfollow_body,
)
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import BLOCK_ERRORS, ERRORS, FOLLOW_ERRORS, REMOVAL_ERRORS
from graphsvc.api.http.lean import LeanRoute
from graphsvc.api.http.params import (
    FollowerId,
    Languages,
    Notify,
    Reblogs,
    RecommendationId,
    TargetId,
    UserId,
)
from graphsvc.domain.access import Scope
from graphsvc.domain.follow_options import OptionEdits, parse_languages
from graphsvc.domain.model import Relationship, iso_utc
from graphsvc.wire.schemas import (
    BlockBody,
    FollowBody,
    RelationshipsBody,
    RemoveFollowerBody,
    RemoveFollowersBody,
    RemoveFollowersIn,
    UnblockBody,
    UnfollowBody,
    settings_extra,
)

router = APIRouter(route_class=LeanRoute, generate_unique_id_function=operation_id)
# The one route of relations with a body, which FastAPI's own handler reads.
with_body = APIRouter(generate_unique_id_function=operation_id)
REQUESTED = {
    202: {
        "model": FollowBody,
        "description": "the followed user is locked: a pending follow request was made "
        '(`{"following": false, "requested": true, "created": bool}`)',
    }
}


@router.put(
    "/v1/users/{user_id}/following/{target_id}",
    response_model=FollowBody,
    responses=ERRORS | FOLLOW_ERRORS | REQUESTED,
    tags=["relations"],
    summary="Follow a user, or ask to when it is locked (202, requested: true); idempotent",
    description="With a `recommendation_id`, a follow that makes the edge counts once for "
    "the ranker version of that suggestions answer (a request to a locked account does not: "
    "it is no follow yet). `notify`, `reblogs` and `languages` set the follow's options (a "
    "request's, which its approval keeps); a repeated follow changes the ones it names and says "
    "so (`options_changed`). They are the follower's alone: only its own relationships show "
    "them.",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def follow(
    user_id: UserId,
    target_id: TargetId,
    request: Request,
    recommendation_id: RecommendationId = None,
    notify: Notify = None,
    reblogs: Reblogs = None,
    languages: Languages = None,
) -> FastJSON:
    edits = OptionEdits(notify, reblogs, parse_languages(languages))
    relations = services_of(request).relations
    return follow_body(await relations.follow(user_id, target_id, recommendation_id, edits))


@router.delete(
    "/v1/users/{user_id}/following/{target_id}",
    response_model=UnfollowBody,
    responses=ERRORS,
    tags=["relations"],
    summary="Unfollow a user, or withdraw a pending follow request (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unfollow(user_id: UserId, target_id: TargetId, request: Request) -> FastJSON:
    return unfollow_body(await services_of(request).relations.unfollow(user_id, target_id))


_REMOVAL = (
    "A removal is the follower's unfollow, asked for by the user it follows: counts, lists and "
    "timelines change as for an unfollow, and the event stream carries the follower's "
    "`unfollow` with `cause=removed`. The follower is not told, and may follow again. An id "
    "with only a pending follow request is no follower: nothing changes (the request waits)."
)


@router.delete(
    "/v1/users/{user_id}/followers/{follower_id}",
    response_model=RemoveFollowerBody,
    responses=ERRORS | REMOVAL_ERRORS,
    tags=["relations"],
    summary="Remove a follower (idempotent)",
    description=_REMOVAL,
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def remove_follower(user_id: UserId, follower_id: FollowerId, request: Request) -> FastJSON:
    removed = await services_of(request).relations.remove_follower(user_id, follower_id)
    return FastJSON({"followed_by": False, "removed": removed})  # RemoveFollowerBody


@with_body.post(
    "/v1/users/{user_id}/followers/remove",
    response_model=RemoveFollowersBody,
    responses=ERRORS | REMOVAL_ERRORS,
    tags=["relations"],
    summary="Remove 1-REMOVE_FOLLOWERS_MAX_IDS followers at once (idempotent)",
    description=f"{_REMOVAL} Every id is checked before anything is written: one bad id, or "
    "the user's own, refuses the request and removes nobody.",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def remove_followers(user_id: UserId, body: RemoveFollowersIn, request: Request) -> FastJSON:
    removed = await services_of(request).relations.remove_followers(user_id, body.ids)
    return FastJSON({"removed": removed})  # RemoveFollowersBody


@router.get(
    "/v1/users/{user_id}/relationships",
    response_model=RelationshipsBody,
    responses=ERRORS,
    tags=["relations"],
    summary="How the user relates to up to 100 others, in one call",
    **guarded(Scope.READ, acts_as_user=True, cost=Cost.GRAPH),
)
async def get_relationships(
    user_id: UserId,
    request: Request,
    ids: Annotated[
        str,
        Query(
            description="comma-separated user ids, 1 to RELATIONSHIPS_MAX_IDS (no spaces)",
            json_schema_extra=settings_extra(id_list="relationships_max_ids"),
        ),
    ],
    known_followers: Annotated[
        bool,
        Query(
            description="also the people the user follows who follow each id (then 1 to "
            "FAMILIAR_MAX_IDS ids), as /familiar-followers?ids= answers them"
        ),
    ] = False,
) -> Response:
    others = ids.split(",") if ids else []  # strictly as the schema says: no spaces
    services = services_of(request)
    found = await services.relations.relationships(user_id, others)
    body = {rel.user_id: relationship_body(rel) for rel in found}
    if known_followers:
        familiar = await services.graph_pages.familiar_followers_many(
            user_id, others, viewer=viewer_of(request)
        )
        for known in familiar:
            body[known.target]["known_followers"] = familiar_body(known)
    return FastJSON({"relationships": body})


def relationship_body(rel: Relationship) -> dict[str, Any]:
    return {
        "following": rel.following,
        "followed_by": rel.followed_by,
        "mutual": rel.mutual,
        "blocking": rel.blocking,
        "blocked_by": rel.blocked_by,
        "requested": rel.requested,
        "requested_by": rel.requested_by,
        "muting": rel.muting,
        "muting_expires_at": iso_utc(rel.muting_until) if rel.muting_until is not None else None,
        **options_body(rel.options),
    }


@router.put(
    "/v1/users/{user_id}/blocks/{target_id}",
    response_model=BlockBody,
    responses=ERRORS | BLOCK_ERRORS,
    tags=["blocks"],
    summary="Block a user: follows both ways are removed, new ones refused (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def block(user_id: UserId, target_id: TargetId, request: Request) -> FastJSON:
    change = await services_of(request).relations.block(user_id, target_id)
    removed = sum(c.changed for c in change.removed)
    # BlockBody
    return FastJSON({"blocking": True, "created": change.created, "removed_follows": removed})


@router.delete(
    "/v1/users/{user_id}/blocks/{target_id}",
    response_model=UnblockBody,
    responses=ERRORS,
    tags=["blocks"],
    summary="Unblock a user (removed follows are not restored; idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unblock(user_id: UserId, target_id: TargetId, request: Request) -> FastJSON:
    removed = await services_of(request).relations.unblock(user_id, target_id)
    return FastJSON({"blocking": False, "removed": removed})  # UnblockBody
