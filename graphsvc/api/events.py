"""Server-Sent Events of a user's new followers, with FastAPI's own SSE support.

Everything a request can get wrong is checked by dependencies, before the stream starts, so
it is a 422 in the one error shape rather than a broken stream. The stream opens with a
``: connected`` comment; FastAPI sends a keep-alive comment every 15 s of silence, so proxies
keep the connection open. Each event's ``id`` is its stream entry: a client that reconnects
with ``Last-Event-ID`` first gets what it missed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent

from graphsvc.api.access import guarded
from graphsvc.api.errors import ERRORS
from graphsvc.api.params import UserId, services_of
from graphsvc.domain.access import Scope
from graphsvc.domain.errors import InvalidParameter
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import iso_utc

router = APIRouter()

# Errors are JSON even on this route (FastAPI would document them as its stream's media type).
_JSON_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {
        "description": response["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for status, response in ERRORS.items()
}

_ENTRY_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


async def _watched(user_id: UserId) -> str:
    return validate_user_id(user_id)


async def _resume_after(
    last_event_id: Annotated[
        str | None,
        Header(description="the id of the last event received; what came after is replayed"),
    ] = None,
) -> str | None:
    if last_event_id is not None and not _ENTRY_ID.fullmatch(last_event_id):
        raise InvalidParameter(f"Last-Event-ID {last_event_id!r} is not a stream entry id")
    return last_event_id


@router.get(
    "/v1/users/{user_id}/events",
    response_class=EventSourceResponse,
    responses=_JSON_ERRORS,
    tags=["relations"],
    summary="Server-Sent Events: the user's new followers, as they follow",
    **guarded(Scope.READ),
)
async def new_followers(
    request: Request,
    user_id: Annotated[str, Depends(_watched)],
    last_event_id: Annotated[str | None, Depends(_resume_after)],
) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(comment="connected")
    async with services_of(request).feed.watch(user_id, last_event_id) as followers:
        async for item in followers:
            data = {"follower": item.follower, "since": iso_utc(item.version),
                    "event_id": item.event_id}  # fmt: skip
            yield ServerSentEvent(
                id=item.entry_id, event="follower", raw_data=orjson.dumps(data).decode()
            )
