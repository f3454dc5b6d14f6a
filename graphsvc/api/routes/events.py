"""Server-Sent Events, with FastAPI's own SSE support: a user's new followers, and its
notifications (a ``posted`` event for each new post of an author whose bell it rings).

Everything a request can get wrong is checked by dependencies, before the stream starts, so
it is an error in the one error shape rather than a broken stream: a bad ``Last-Event-ID`` is a
400 naming the header, a key at its open streams' limit a 429 ``stream_limit``, a replay the
key's budget cannot pay the 429 of a spent budget (the policies are the follower events':
``services/follower_events.py``). The stream opens with a ``: connected`` comment; FastAPI
sends a keep-alive comment every 15 s of silence, so proxies keep the connection open.

Each ``follower`` event's ``id`` is its stream entry: a client that reconnects with
``Last-Event-ID`` first gets what it missed. A ``gap`` event (its ``id`` the newest entry
skipped) says a replay skipped entries, so followers may have been missed (read the followers
list to catch up). A ``closed`` event, ``{"code", "message"}``, is the last of a stream the
server ends: its key was revoked (``unauthenticated``), could not be checked
(``key_unchecked``) or lost its stream slot (``stream_limit``); reconnecting gets the answer a
new request would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent

from graphsvc.api.http.access import BUDGET_HEADERS, guarded
from graphsvc.api.http.context import api_key_of, services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import UserId
from graphsvc.domain.access import Scope, bearer_token
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import iso_utc
from graphsvc.services.follower_events import OpenStream, StreamItem
from graphsvc.services.notifications import NotificationItem, Posted
from graphsvc.services.stream_policies import Closed, Gap, resume_point
from graphsvc.services.stream_policies import OpenStream as OpenStreamOf

router = APIRouter(generate_unique_id_function=operation_id)
OpenNotifications = OpenStreamOf[NotificationItem]

_STREAM_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    400: {"description": "a Last-Event-ID that is no stream entry id"},
    429: {
        "description": "the key has EVENTS_STREAMS_PER_KEY open streams (stream_limit), or its "
        "read budget cannot pay the replay (rate_limited)",
    },
}
# Errors are JSON even on this route (FastAPI would document them as its stream's media type).
_JSON_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {
        "description": response["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for status, response in _STREAM_ERRORS.items()
}


async def _watched(user_id: UserId) -> str:
    return validate_user_id(user_id)


async def _resume_after(
    last_event_id: Annotated[
        str | None,
        Header(
            description="the id of the last event received (<ms>-<seq>); what came after is "
            "replayed, the newest EVENTS_REPLAY_MAX stream entries at most"
        ),
    ] = None,
) -> str | None:
    return resume_point(last_event_id) if last_event_id is not None else None


async def _stream(
    request: Request,
    user_id: Annotated[str, Depends(_watched)],
    last_event_id: Annotated[str | None, Depends(_resume_after)],
) -> AsyncIterator[OpenStream]:
    """The follower events' stream for the admitted key, open until the response ends."""
    key = api_key_of(request)  # the route's admission runs first
    token = bearer_token(request.headers.get("authorization"))
    async with services_of(request).follower_events.open(
        key.id, token, user_id, last_event_id
    ) as stream:
        if stream.budget is not None:
            request.scope.setdefault("state", {})[BUDGET_HEADERS] = stream.budget.headers()
        yield stream


def _event(item: StreamItem) -> ServerSentEvent:
    if isinstance(item, Gap):
        message = (
            f"more than {item.replayed} stream entries came after Last-Event-ID and only the "
            f"newest {item.replayed} were replayed: followers may have been missed (the "
            "followers list has them all)"
        )
        data = {"code": "replay_limit", "message": message}
        return ServerSentEvent(id=item.entry_id, event="gap", raw_data=orjson.dumps(data).decode())
    if isinstance(item, Closed):
        data = {"code": item.code, "message": item.message}
        return ServerSentEvent(event="closed", raw_data=orjson.dumps(data).decode())
    if item.requested:
        data = {
            "requester": item.follower,
            "since": iso_utc(item.version),
            "event_id": item.event_id,
        }
        raw = orjson.dumps(data).decode()
        return ServerSentEvent(id=item.entry_id, event="follow_request", raw_data=raw)
    data = {"follower": item.follower, "since": iso_utc(item.version), "event_id": item.event_id}
    return ServerSentEvent(id=item.entry_id, event="follower", raw_data=orjson.dumps(data).decode())


@router.get(
    "/v1/users/{user_id}/events",
    response_class=EventSourceResponse,
    responses=_JSON_ERRORS,
    tags=["relations"],
    summary="Server-Sent Events: the user's new followers as they follow, and the follow "
    "requests it is asked when locked",
    **guarded(Scope.READ, acts_as_user=True),
)
async def stream_new_followers(
    stream: Annotated[OpenStream, Depends(_stream)],
) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(comment="connected")
    async for item in stream.items:
        yield _event(item)


async def _notifications(
    request: Request,
    user_id: Annotated[str, Depends(_watched)],
    last_event_id: Annotated[str | None, Depends(_resume_after)],
) -> AsyncIterator[OpenNotifications]:
    """The user's notification stream for the admitted key, open until the response ends."""
    key = api_key_of(request)
    token = bearer_token(request.headers.get("authorization"))
    async with services_of(request).notifications.open(
        key.id, token, user_id, last_event_id
    ) as stream:
        if stream.budget is not None:
            request.scope.setdefault("state", {})[BUDGET_HEADERS] = stream.budget.headers()
        yield stream


def _notification(item: NotificationItem) -> ServerSentEvent:
    if isinstance(item, Posted):
        data = {"author": item.author, "post_id": item.post_id, "at": iso_utc(item.at)}
        return ServerSentEvent(
            id=item.entry_id, event="posted", raw_data=orjson.dumps(data).decode()
        )
    if isinstance(item, Gap):
        message = (
            "notifications after Last-Event-ID were trimmed from the user's stream "
            "(NOTIFICATIONS_MAX): some may have been missed"
        )
        data = {"code": "notifications_trimmed", "message": message}
        return ServerSentEvent(id=item.entry_id, event="gap", raw_data=orjson.dumps(data).decode())
    data = {"code": item.code, "message": item.message}
    return ServerSentEvent(event="closed", raw_data=orjson.dumps(data).decode())


@router.get(
    "/v1/users/{user_id}/notifications",
    response_class=EventSourceResponse,
    responses=_JSON_ERRORS,
    tags=["relations"],
    summary="Server-Sent Events: the user's notifications, a `posted` event for each new post "
    "of an author whose bell it rings",
    description="A follow with `notify=true` rings its author's bell: each new post of the "
    "author (not a reblog) is rung into the follower's own notification stream by the worker, "
    "once, and sent here as a `posted` event `{author, post_id, at}` whose id resumes the stream "
    "(`Last-Event-ID`: every notification after it the stream still holds, NOTIFICATIONS_MAX "
    "at most, with a `gap` event first when some were trimmed). Not sent: a post of an author "
    "the user mutes or is in a block with, or who is suspended or spam, or a deleted post.",
    **guarded(Scope.READ, acts_as_user=True),
)
async def stream_notifications(
    stream: Annotated[OpenNotifications, Depends(_notifications)],
) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(comment="connected")
    async for item in stream.items:
        yield _notification(item)
