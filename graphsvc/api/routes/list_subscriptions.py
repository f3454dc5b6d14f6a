"""Routes of a user's follows of curate lists and subscriptions to moderation lists.

Both are the user's own: each route acts as the user (``acts_as_user``), for its changes and
its reads alike, and no route tells a list's owner who follows or subscribes. A list the user
may not see is a 404 ``list_not_found``, as an unknown list is (``services/lists/follows.py``,
``services/lists/subscriptions.py``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import Cursor, Limit, ListId, TargetId, UserId
from graphsvc.api.routes.lists import list_json
from graphsvc.domain.access import Scope
from graphsvc.domain.model import iso_utc
from graphsvc.domain.privacy import Viewer
from graphsvc.domain.subscriptions import Action, Subscription
from graphsvc.wire.schemas import (
    ErrorBody,
    ExceptionBody,
    ExceptionsBody,
    FollowedListsBody,
    ListFollowBody,
    SubscriptionBody,
    SubscriptionIn,
    SubscriptionsBody,
    UnsubscribedBody,
)

router = APIRouter(generate_unique_id_function=operation_id)

LIST_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {
        "model": ErrorBody,
        "description": "list_not_found: no such list, or one the user may not see",
    },
    409: {
        "model": ErrorBody,
        "description": "a bound reached (list_follow_limit, subscription_limit), a list of the "
        "other purpose (list_purpose: a curate list is followed, a moderation list subscribed "
        "to), or the user is being erased (user_erasing); nothing changed",
    },
}
SUBSCRIPTION_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": ErrorBody, "description": "subscription_not_found"},
    409: {
        "model": ErrorBody,
        "description": "not_list_member: an exception for someone the list does not hold",
    },
}


def subscription_json(found: Subscription) -> dict[str, Any]:
    return {
        "list_id": found.list_id,
        "owner": found.owner,
        "name": found.name,
        "action": found.action.value,
        "since": iso_utc(found.since),
        "state": found.state,
        "applied": found.applied,
        "refused": found.refused,
        "exceptions": found.exceptions,
    }


# -- follows of curate lists -------------------------------------------------------------------


@router.put(
    "/v1/users/{user_id}/followed-lists/{list_id}",
    response_model=ListFollowBody,
    responses=LIST_ERRORS,
    tags=["lists"],
    summary="Follow a curate list the user may see, to read its timeline (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def follow_list(user_id: UserId, list_id: ListId, request: Request) -> ListFollowBody:
    created = await services_of(request).list_follows.follow(user_id, list_id)
    return ListFollowBody(following=True, changed=created)


@router.delete(
    "/v1/users/{user_id}/followed-lists/{list_id}",
    response_model=ListFollowBody,
    responses=ERRORS,
    tags=["lists"],
    summary="Stop following a list (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unfollow_list(user_id: UserId, list_id: ListId, request: Request) -> ListFollowBody:
    removed = await services_of(request).list_follows.unfollow(user_id, list_id)
    return ListFollowBody(following=False, changed=removed)


@router.get(
    "/v1/users/{user_id}/followed-lists",
    response_model=FollowedListsBody,
    responses=ERRORS,
    tags=["lists"],
    summary="The lists the user follows and may still see, newest follow first",
    **guarded(Scope.READ, cost=Cost.GRAPH, acts_as_user=True),
)
async def list_followed_lists(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> FastJSON:
    items, next_cursor = await services_of(request).list_follows.followed(user_id, limit, cursor)
    viewer = Viewer(user_id)
    body = [{**list_json(f.list, viewer), "followed_at": iso_utc(f.since)} for f in items]
    return FastJSON({"items": body, "next_cursor": next_cursor})


# -- subscriptions to moderation lists ---------------------------------------------------------


@router.put(
    "/v1/users/{user_id}/list-subscriptions/{list_id}",
    response_model=SubscriptionBody,
    status_code=202,
    responses=LIST_ERRORS,
    tags=["lists"],
    summary="Mute or block every member of a moderation list, kept current as it changes",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def subscribe_list(
    user_id: UserId, list_id: ListId, body: SubscriptionIn, request: Request
) -> FastJSON:
    found = await services_of(request).list_subscriptions.subscribe(
        user_id, list_id, Action(body.action)
    )
    return FastJSON(subscription_json(found), status_code=202)


@router.get(
    "/v1/users/{user_id}/list-subscriptions/{list_id}",
    response_model=SubscriptionBody,
    responses=SUBSCRIPTION_ERRORS,
    tags=["lists"],
    summary="One subscription and its state",
    **guarded(Scope.READ, cost=Cost.GRAPH, acts_as_user=True),
)
async def get_list_subscription(user_id: UserId, list_id: ListId, request: Request) -> FastJSON:
    found = await services_of(request).list_subscriptions.get(user_id, list_id)
    return FastJSON(subscription_json(found))


@router.delete(
    "/v1/users/{user_id}/list-subscriptions/{list_id}",
    response_model=UnsubscribedBody,
    status_code=202,
    responses=ERRORS
    | {200: {"model": UnsubscribedBody, "description": "no such subscription (false)"}},
    tags=["lists"],
    summary="Unsubscribe: exactly what the subscription did is undone, in the background",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unsubscribe_list(user_id: UserId, list_id: ListId, request: Request) -> FastJSON:
    removed = await services_of(request).list_subscriptions.unsubscribe(user_id, list_id)
    return FastJSON({"unsubscribed": removed}, status_code=202 if removed else 200)


@router.get(
    "/v1/users/{user_id}/list-subscriptions",
    response_model=SubscriptionsBody,
    responses=ERRORS,
    tags=["lists"],
    summary="The user's subscriptions to moderation lists, newest first",
    **guarded(Scope.READ, cost=Cost.GRAPH, acts_as_user=True),
)
async def list_list_subscriptions(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> FastJSON:
    items, next_cursor = await services_of(request).list_subscriptions.subscriptions(
        user_id, limit, cursor
    )
    return FastJSON({"items": [subscription_json(i) for i in items], "next_cursor": next_cursor})


@router.put(
    "/v1/users/{user_id}/list-subscriptions/{list_id}/exceptions/{target_id}",
    response_model=ExceptionBody,
    responses=SUBSCRIPTION_ERRORS,
    tags=["lists"],
    summary="Except a member from a subscription (its mute or block is undone)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def except_list_member(
    user_id: UserId, list_id: ListId, target_id: TargetId, request: Request
) -> ExceptionBody:
    changed = await services_of(request).list_subscriptions.except_member(
        user_id, list_id, target_id, excepted=True
    )
    return ExceptionBody(excepted=True, changed=changed)


@router.delete(
    "/v1/users/{user_id}/list-subscriptions/{list_id}/exceptions/{target_id}",
    response_model=ExceptionBody,
    responses=SUBSCRIPTION_ERRORS,
    tags=["lists"],
    summary="End an exception (the subscription mutes or blocks the member again)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def unexcept_list_member(
    user_id: UserId, list_id: ListId, target_id: TargetId, request: Request
) -> ExceptionBody:
    changed = await services_of(request).list_subscriptions.except_member(
        user_id, list_id, target_id, excepted=False
    )
    return ExceptionBody(excepted=False, changed=changed)


@router.get(
    "/v1/users/{user_id}/list-subscriptions/{list_id}/exceptions",
    response_model=ExceptionsBody,
    responses=SUBSCRIPTION_ERRORS,
    tags=["lists"],
    summary="The members a subscription leaves alone, by id",
    **guarded(Scope.READ, cost=Cost.GRAPH, acts_as_user=True),
)
async def list_subscription_exceptions(
    user_id: UserId, list_id: ListId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> ExceptionsBody:
    items, next_cursor = await services_of(request).list_subscriptions.exceptions(
        user_id, list_id, limit, cursor
    )
    return ExceptionsBody(items=items, next_cursor=next_cursor)
