"""HTTP layer: routes translate requests to service calls and results to JSON, nothing more.

Every error, whether raised by the service, by request validation or by routing, leaves as
``{"error": {"code": ..., "message": ...}}``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, Literal

import orjson
from fastapi import FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError
from pydantic import BaseModel, Field
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.degraded import MIRROR_DOWN, tracking_fallbacks
from graphsvc.errors import GraphError, InvalidParameter
from graphsvc.follower_feed import FollowerFeed
from graphsvc.ids import USER_ID_PATTERN, validate_user_id
from graphsvc.model import IdPage, Page, UserState, iso_utc
from graphsvc.recommend import InteractionIn as RecordedInteraction
from graphsvc.runtime import open_service
from graphsvc.service import GraphService
from graphsvc.settings import Settings, get_settings

log = logging.getLogger(__name__)


# -- response bodies ------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid_user_id"])
    message: str = Field(examples=["target_id 'bad id' is not a valid user id"])


class ErrorBody(BaseModel):
    error: ErrorDetail


class FollowBody(BaseModel):
    following: bool
    created: bool = Field(description="false when the follow already existed")


class UnfollowBody(BaseModel):
    following: bool
    removed: bool = Field(description="false when there was no follow to remove")


class Item(BaseModel):
    user_id: str
    since: str = Field(
        description="follow time, ISO-8601 UTC", examples=["2026-11-22T10:00:00.000000Z"]
    )


class PageBody(BaseModel):
    items: list[Item]
    next_cursor: str | None = Field(
        description="pass as ?cursor= for the next page; null at the end"
    )


class CountsBody(BaseModel):
    followers: int = Field(description="exact, every follower")
    following: int = Field(description="exact, every followed user")
    followers_active: int = Field(description="followers that are not suspended or spam")
    following_active: int = Field(description="followed users that are not suspended or spam")
    friends: int = Field(description="active mutual follows")
    celebrity: bool = Field(description="followers >= CELEBRITY_FOLLOWERS")


class RelationshipBody(BaseModel):
    following: bool = Field(description="the user follows this id")
    followed_by: bool = Field(description="this id follows the user")
    mutual: bool
    blocking: bool = Field(description="the user blocks this id")
    blocked_by: bool = Field(description="this id blocks the user")


class RelationshipsBody(BaseModel):
    relationships: dict[str, RelationshipBody] = Field(description="keyed by the ids asked for")


class IdPageBody(BaseModel):
    total: int = Field(description="exact size of the whole list")
    items: list[str]
    next_cursor: str | None = None


class BlockBody(BaseModel):
    blocking: bool
    created: bool = Field(description="false when the block already existed")
    removed_follows: int = Field(description="follows removed by this block (0-2)")


class UnblockBody(BaseModel):
    blocking: bool
    removed: bool = Field(description="false when there was no block to remove")


class StatusRequest(BaseModel):
    status: Literal["active", "suspended", "spam"]


class StatusBody(BaseModel):
    user_id: str
    exists: bool
    status: str
    fanout_pending: bool = Field(description="counts depending on the status still updating")
    erasing: bool = Field(description="the user is being erased")
    progress: dict[str, int] | None = Field(
        default=None, description="edges done by this process's running job, when it has one"
    )


class InteractionIn(BaseModel):
    actor: str = Field(examples=["alice"])
    target: str = Field(examples=["bob"])
    kind: str = Field(description="a kind of INTERACTION_WEIGHTS", examples=["message"])
    at: datetime = Field(description="when it happened (ISO-8601; UTC if no zone)")


class AcceptedBody(BaseModel):
    accepted: int = Field(description="events buffered; affinity reflects them within seconds")


class AffinityItem(BaseModel):
    user_id: str
    affinity: float


class AffinitiesBody(BaseModel):
    items: list[AffinityItem]


class Reasons(BaseModel):
    mutual_count: int = Field(description="people you follow who follow them")
    via: list[str] = Field(description="up to 3 of those, closest to you first")


class SuggestionItem(BaseModel):
    user_id: str
    score: float
    reasons: Reasons
    sources: list[str] = Field(
        description="friends_of_friends, follows_you (a follower you do not follow), popular"
    )


class SuggestionsBody(BaseModel):
    items: list[SuggestionItem]


class DismissBody(BaseModel):
    dismissed: bool
    created: bool = Field(description="false when it was dismissed before")


class EraseBody(BaseModel):
    user_id: str
    state: Literal["erasing", "absent"]


class HealthBody(BaseModel):
    neo4j: str = Field(examples=["ok"])
    redis: str = Field(
        examples=["ok"], description="ok, or unavailable (reads are then served from Neo4j)"
    )


class FastJSON(Response):
    """JSON by orjson, for bodies the route already shaped (no second validation pass)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def _page_body(page: Page) -> FastJSON:
    items = [{"user_id": e.user_id, "since": iso_utc(e.since)} for e in page.items]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})


def _id_page_body(page: IdPage) -> FastJSON:
    return FastJSON({"total": page.total, "items": page.user_ids, "next_cursor": page.next_cursor})


_FOLLOW_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "a block, or a suspended user, forbids it"},
    409: {"model": ErrorBody, "description": "MAX_FOLLOWING reached, or a user is being erased"},
    429: {"model": ErrorBody, "description": "FOLLOWS_PER_DAY reached (see Retry-After)"},
}


# -- parameters -----------------------------------------------------------------------------

_ID_DOC = "1-64 characters from [A-Za-z0-9_.-]"
UserId = Annotated[str, Path(description=_ID_DOC, json_schema_extra={"pattern": USER_ID_PATTERN})]
TargetId = Annotated[str, Path(description=_ID_DOC, json_schema_extra={"pattern": USER_ID_PATTERN})]
Limit = Annotated[int | None, Query(description="page size, 1-200 (default 20)")]
Cursor = Annotated[str | None, Query(description="next_cursor of the previous page")]
OtherId = Annotated[str, Path(description=_ID_DOC, json_schema_extra={"pattern": USER_ID_PATTERN})]
Flag = Annotated[bool, Query()]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "unparseable or tampered cursor"},
    422: {"model": ErrorBody, "description": "invalid user id, limit, parameter or self-follow"},
    503: {"model": ErrorBody, "description": "a backing store is unavailable"},
}


# -- errors -----------------------------------------------------------------------------------


def _error(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where, *names = err.get("loc", ("request",))
        name = ".".join(str(n) for n in names) or str(where)
        shown = f" (got {err['input']!r})" if "input" in err and err["input"] is not None else ""
        parts.append(f"{where} parameter {name!r}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts) or "invalid request"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GraphError)
    async def graph_error(_: Request, exc: GraphError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid_request", _describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(ServiceUnavailable)
    @app.exception_handler(SessionExpired)
    @app.exception_handler(TransientError)  # DatabaseUnavailable while it stops or starts
    async def neo4j_down(_: Request, exc: Exception) -> JSONResponse:
        log.warning("neo4j unavailable: %s", exc)
        return _error(
            503,
            "neo4j_unavailable",
            "the graph database is unavailable; retry later",
            {"Retry-After": "1"},
        )

    @app.exception_handler(RedisConnectionError)
    @app.exception_handler(RedisTimeoutError)
    async def redis_down(_: Request, exc: Exception) -> JSONResponse:
        log.warning("redis unavailable: %s", exc)
        return _error(
            503,
            "redis_unavailable",
            "the relation cache is unavailable; retry later",
            {"Retry-After": "1"},
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return _error(500, "internal", "internal error")


class GraphSourceHeader:
    """Adds ``X-Graph-Source: neo4j`` to responses that Neo4j answered because Redis could
    not be reached (pure ASGI: the route runs in this context, so it sees the note list)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with tracking_fallbacks() as noted:

            async def send_noted(message: Message) -> None:
                if message["type"] == "http.response.start" and noted:
                    headers = [*message.get("headers", []), (b"x-graph-source", b"neo4j")]
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_noted)


def _status_body(user_id: str, state: UserState | None, service: GraphService) -> StatusBody:
    progress = service.progress(user_id)
    return StatusBody(
        user_id=user_id,
        exists=state is not None,
        status=state.status if state else "active",
        fanout_pending=bool(state and state.fanout_pending),
        erasing=bool(state and state.erasing),
        progress=dict(progress.notes) if progress else None,
    )


# -- app ----------------------------------------------------------------------------------------


def create_app(settings: Settings | None = None, service: GraphService | None = None) -> FastAPI:
    """The ASGI app. Pass ``service`` to serve already-open backends (tests, notebooks)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if service is not None:  # already open, owned by the caller
            yield
            return
        async with open_service(settings, resume=True) as opened:
            app.state.service = opened
            yield

    app = FastAPI(
        title="graphsvc",
        version="0.1.0",
        summary="Follow-graph relations: Neo4j holds the truth, Redis mirrors hot lists and counts.",
        lifespan=lifespan,
    )
    _install_error_handlers(app)
    app.add_middleware(GraphSourceHeader)
    if service is not None:
        app.state.service = service

    def svc(request: Request) -> GraphService:
        return request.app.state.service

    @app.put(
        "/v1/users/{user_id}/following/{target_id}",
        response_model=FollowBody,
        responses=_ERRORS | _FOLLOW_ERRORS,
        tags=["relations"],
        summary="Follow a user (idempotent)",
    )
    async def follow(user_id: UserId, target_id: TargetId, request: Request) -> FollowBody:
        created = await svc(request).follow(user_id, target_id)
        return FollowBody(following=True, created=created)

    @app.delete(
        "/v1/users/{user_id}/following/{target_id}",
        response_model=UnfollowBody,
        responses=_ERRORS,
        tags=["relations"],
        summary="Unfollow a user (idempotent)",
    )
    async def unfollow(user_id: UserId, target_id: TargetId, request: Request) -> UnfollowBody:
        removed = await svc(request).unfollow(user_id, target_id)
        return UnfollowBody(following=False, removed=removed)

    @app.get(
        "/v1/users/{user_id}/followers",
        response_model=PageBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Who follows the user, newest first (active users only)",
    )
    async def followers(
        user_id: UserId,
        request: Request,
        limit: Limit = None,
        cursor: Cursor = None,
        not_followed_back: Annotated[
            bool, Query(description="only followers the user does not follow")
        ] = False,
    ) -> Response:
        page = await svc(request).followers(
            user_id, limit, cursor, not_followed_back=not_followed_back
        )
        return _page_body(page)

    @app.get(
        "/v1/users/{user_id}/following",
        response_model=PageBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Whom the user follows, newest first (active users only)",
    )
    async def following(
        user_id: UserId,
        request: Request,
        limit: Limit = None,
        cursor: Cursor = None,
        not_following_back: Annotated[
            bool, Query(description="only those who do not follow the user")
        ] = False,
        celebrities_only: Annotated[
            bool, Query(description="only users with at least CELEBRITY_FOLLOWERS followers")
        ] = False,
    ) -> Response:
        page = await svc(request).following(
            user_id,
            limit,
            cursor,
            not_following_back=not_following_back,
            celebrities_only=celebrities_only,
        )
        return _page_body(page)

    @app.get(
        "/v1/users/{user_id}/friends",
        response_model=PageBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Active mutual follows, by when the user followed them, newest first",
    )
    async def friends(
        user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
    ) -> Response:
        return _page_body(await svc(request).friends(user_id, limit, cursor))

    @app.get(
        "/v1/users/{user_id}/counts",
        response_model=CountsBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Exact counts: totals, active users only, friends",
    )
    async def counts(user_id: UserId, request: Request) -> Response:
        service_ = svc(request)
        result = await service_.counts(user_id)
        return FastJSON({
            "followers": result.followers,
            "following": result.following,
            "followers_active": result.followers_active,
            "following_active": result.following_active,
            "friends": result.friends,
            "celebrity": service_.is_celebrity(result),
        })  # fmt: skip

    @app.get(
        "/v1/users/{user_id}/relationships",
        response_model=RelationshipsBody,
        responses=_ERRORS,
        tags=["relations"],
        summary="How the user relates to up to 100 others, in one call",
    )
    async def relationships(
        user_id: UserId,
        request: Request,
        ids: Annotated[str, Query(description="comma-separated user ids (1-100)")],
    ) -> Response:
        others = [part.strip() for part in ids.split(",")] if ids else []
        found = await svc(request).relationships(user_id, others)
        return FastJSON({
            "relationships": {
                rel.user_id: {
                    "following": rel.following,
                    "followed_by": rel.followed_by,
                    "mutual": rel.mutual,
                    "blocking": rel.blocking,
                    "blocked_by": rel.blocked_by,
                }
                for rel in found
            }
        })  # fmt: skip

    @app.get(
        "/v1/users/{user_id}/common-following/{other_id}",
        response_model=IdPageBody,
        responses=_ERRORS,
        tags=["relations"],
        summary="Active users both follow, in id order, with the total",
    )
    async def common_following(
        user_id: UserId,
        other_id: OtherId,
        request: Request,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> Response:
        page = await svc(request).common_following(user_id, other_id, limit, cursor)
        return _id_page_body(page)

    @app.get(
        "/v1/users/{user_id}/common-followers/{other_id}",
        response_model=IdPageBody,
        responses=_ERRORS,
        tags=["relations"],
        summary="Active users who follow both, in id order, with the total",
    )
    async def common_followers(
        user_id: UserId,
        other_id: OtherId,
        request: Request,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> Response:
        page = await svc(request).common_followers(user_id, other_id, limit, cursor)
        return _id_page_body(page)

    @app.get(
        "/v1/users/{user_id}/familiar-followers/{target_id}",
        response_model=IdPageBody,
        responses=_ERRORS,
        tags=["relations"],
        summary="People the user follows who follow the target ('Followed by A, B and 12 others')",
    )
    async def familiar_followers(
        user_id: UserId, target_id: TargetId, request: Request, limit: Limit = None
    ) -> Response:
        return _id_page_body(await svc(request).familiar_followers(user_id, target_id, limit))

    @app.put(
        "/v1/users/{user_id}/blocks/{target_id}",
        response_model=BlockBody,
        responses=_ERRORS,
        tags=["blocks"],
        summary="Block a user: follows both ways are removed, new ones refused (idempotent)",
    )
    async def block(user_id: UserId, target_id: TargetId, request: Request) -> BlockBody:
        change = await svc(request).block(user_id, target_id)
        removed = sum(c.changed for c in change.removed)
        return BlockBody(blocking=True, created=change.created, removed_follows=removed)

    @app.delete(
        "/v1/users/{user_id}/blocks/{target_id}",
        response_model=UnblockBody,
        responses=_ERRORS,
        tags=["blocks"],
        summary="Unblock a user (removed follows are not restored; idempotent)",
    )
    async def unblock(user_id: UserId, target_id: TargetId, request: Request) -> UnblockBody:
        removed = await svc(request).unblock(user_id, target_id)
        return UnblockBody(blocking=False, removed=removed)

    @app.put(
        "/v1/users/{user_id}/status",
        response_model=StatusBody,
        responses=_ERRORS,
        tags=["moderation"],
        summary="Set active, suspended or spam; dependent counts update in the background",
    )
    async def set_status(user_id: UserId, body: StatusRequest, request: Request) -> StatusBody:
        service_ = svc(request)
        state = await service_.set_status(user_id, body.status)
        return _status_body(user_id, state, service_)

    @app.get(
        "/v1/users/{user_id}/status",
        response_model=StatusBody,
        responses=_ERRORS,
        tags=["moderation"],
        summary="A user's status, and whether a fan-out or erasure is still running",
    )
    async def get_status(user_id: UserId, request: Request) -> StatusBody:
        service_ = svc(request)
        return _status_body(user_id, await service_.user_state(user_id), service_)

    @app.delete(
        "/v1/users/{user_id}",
        response_model=EraseBody,
        status_code=202,
        responses=_ERRORS | {200: {"model": EraseBody, "description": "no such user"}},
        tags=["moderation"],
        summary="Erase a user and every edge, in the background (see GET .../status)",
    )
    async def erase(user_id: UserId, request: Request) -> Response:
        if await svc(request).erase(user_id):
            return FastJSON({"user_id": user_id, "state": "erasing"}, status_code=202)
        return FastJSON({"user_id": user_id, "state": "absent"}, status_code=200)

    @app.post(
        "/v1/interactions",
        response_model=AcceptedBody,
        status_code=202,
        responses=_ERRORS,
        tags=["people you may know"],
        summary="Record 1-1,000 interactions (messages, comments, likes, visits)",
    )
    async def interactions(events: list[InteractionIn], request: Request) -> Response:
        accepted = await svc(request).pymk.record(
            [RecordedInteraction(e.actor, e.target, e.kind, e.at) for e in events]
        )
        return FastJSON({"accepted": accepted}, status_code=202)

    @app.get(
        "/v1/users/{user_id}/suggestions",
        response_model=SuggestionsBody,
        responses=_ERRORS,
        tags=["people you may know"],
        summary="People the user may know, best first, with reasons",
    )
    async def suggestions(
        user_id: UserId,
        request: Request,
        limit: Annotated[int, Query(description="1-50")] = 10,
    ) -> Response:
        found = await svc(request).pymk.suggestions(user_id, limit)
        return FastJSON({"items": [s.as_json() for s in found]})

    @app.delete(
        "/v1/users/{user_id}/suggestions/{target_id}",
        response_model=DismissBody,
        responses=_ERRORS,
        tags=["people you may know"],
        summary="Never suggest the target to the user again",
    )
    async def dismiss(user_id: UserId, target_id: TargetId, request: Request) -> DismissBody:
        created = await svc(request).pymk.dismiss(user_id, target_id)
        return DismissBody(dismissed=True, created=created)

    @app.get(
        "/v1/internal/users/{user_id}/affinities",
        response_model=AffinitiesBody,
        responses=_ERRORS,
        tags=["internal"],
        summary="Whom the user is closest to, with affinity (internal: never shown to users)",
    )
    async def affinities(
        user_id: UserId,
        request: Request,
        limit: Annotated[int, Query(description="1-1000")] = 20,
    ) -> Response:
        found = await svc(request).pymk.affinities(user_id, limit)
        return FastJSON({"items": [{"user_id": u, "affinity": a} for u, a in found]})

    @app.get(
        "/healthz",
        response_model=HealthBody,
        tags=["operations"],
        summary="Both backing stores answer",
    )
    async def health(request: Request) -> HealthBody:
        service_ = svc(request)
        await service_.graph.verify()  # Neo4j down: 503 (nothing can be written)
        try:
            await service_.mirror.ping()
        except MIRROR_DOWN:
            return HealthBody(neo4j="ok", redis="unavailable")
        return HealthBody(neo4j="ok", redis="ok")

    @app.get(
        "/v1/users/{user_id}/events",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}} | _ERRORS,
        tags=["relations"],
        summary="Server-Sent Events: the user's new followers, as they follow",
    )
    async def new_followers(
        user_id: UserId,
        request: Request,
        last_event_id: Annotated[
            str | None,
            Header(description="the id of the last event received; what came after is replayed"),
        ] = None,
    ) -> StreamingResponse:
        validate_user_id(user_id)
        if last_event_id is not None and not _ENTRY_ID.fullmatch(last_event_id):
            raise InvalidParameter(f"Last-Event-ID {last_event_id!r} is not a stream entry id")
        feed = svc(request).feed
        return StreamingResponse(
            _sse(feed, user_id, last_event_id, request),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return app


_ENTRY_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
KEEPALIVE_SECONDS = 15.0


async def _sse(
    feed: FollowerFeed, user_id: str, last_id: str | None, request: Request
) -> AsyncIterator[bytes]:
    """``event: follower`` messages (``id`` = stream entry, for Last-Event-ID), and a comment
    every KEEPALIVE_SECONDS so proxies keep the connection open."""
    yield b": connected\n\n"
    async with feed.watch(user_id, last_id) as followers:
        pending = asyncio.ensure_future(anext(followers))
        try:
            while not await request.is_disconnected():
                done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
                if not done:
                    yield b": keepalive\n\n"
                    continue
                item = pending.result()
                pending = asyncio.ensure_future(anext(followers))
                data = orjson.dumps(
                    {
                        "follower": item.follower,
                        "since": iso_utc(item.version),
                        "event_id": item.event_id,
                    }
                )
                yield (
                    b"id: " + item.entry_id.encode() + b"\nevent: follower\ndata: " + data + b"\n\n"
                )
        finally:
            pending.cancel()
