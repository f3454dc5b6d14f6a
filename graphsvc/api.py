"""HTTP layer: routes translate requests to service calls and results to JSON, nothing more.

Every error, whether raised by the service, by request validation or by routing, leaves as
``{"error": {"code": ..., "message": ...}}``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import orjson
from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from neo4j.exceptions import ServiceUnavailable, SessionExpired
from pydantic import BaseModel, Field
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphsvc.errors import GraphError
from graphsvc.ids import USER_ID_PATTERN
from graphsvc.model import Page, iso_utc
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
    followers: int
    following: int


class HealthBody(BaseModel):
    neo4j: str
    redis: str


class FastJSON(Response):
    """JSON by orjson, for bodies the route already shaped (no second validation pass)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def _page_body(page: Page) -> FastJSON:
    items = [{"user_id": e.user_id, "since": iso_utc(e.since)} for e in page.items]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})


# -- parameters -----------------------------------------------------------------------------

_ID_DOC = "1-64 characters from [A-Za-z0-9_.-]"
UserId = Annotated[str, Path(description=_ID_DOC, json_schema_extra={"pattern": USER_ID_PATTERN})]
TargetId = Annotated[str, Path(description=_ID_DOC, json_schema_extra={"pattern": USER_ID_PATTERN})]
Limit = Annotated[int | None, Query(description="page size, 1-200 (default 20)")]
Cursor = Annotated[str | None, Query(description="next_cursor of the previous page")]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "unparseable or tampered cursor"},
    422: {"model": ErrorBody, "description": "invalid user id, limit or self-follow"},
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
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid_request", _describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(ServiceUnavailable)
    @app.exception_handler(SessionExpired)
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


# -- app ----------------------------------------------------------------------------------------


def create_app(settings: Settings | None = None, service: GraphService | None = None) -> FastAPI:
    """The ASGI app. Pass ``service`` to serve already-open backends (tests, notebooks)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if service is not None:  # already open, owned by the caller
            yield
            return
        async with open_service(settings) as opened:
            app.state.service = opened
            yield

    app = FastAPI(
        title="graphsvc",
        version="0.1.0",
        summary="Follow-graph relations: Neo4j holds the truth, Redis mirrors hot lists and counts.",
        lifespan=lifespan,
    )
    _install_error_handlers(app)
    if service is not None:
        app.state.service = service

    def svc(request: Request) -> GraphService:
        return request.app.state.service

    @app.put(
        "/v1/users/{user_id}/following/{target_id}",
        response_model=FollowBody,
        responses=_ERRORS,
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
        summary="Who follows the user, newest first",
    )
    async def followers(
        user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
    ) -> Response:
        return _page_body(await svc(request).followers(user_id, limit, cursor))

    @app.get(
        "/v1/users/{user_id}/following",
        response_model=PageBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Whom the user follows, newest first",
    )
    async def following(
        user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
    ) -> Response:
        return _page_body(await svc(request).following(user_id, limit, cursor))

    @app.get(
        "/v1/users/{user_id}/counts",
        response_model=CountsBody,
        responses=_ERRORS,
        tags=["lists"],
        summary="Exact follower and following counts",
    )
    async def counts(user_id: UserId, request: Request) -> Response:
        result = await svc(request).counts(user_id)
        return FastJSON({"followers": result.followers, "following": result.following})

    @app.get(
        "/healthz",
        response_model=HealthBody,
        tags=["operations"],
        summary="Both backing stores answer",
    )
    async def health(request: Request) -> HealthBody:
        service_ = svc(request)
        await service_.graph.verify()
        await service_.mirror.ping()
        return HealthBody(neo4j="ok", redis="ok")

    return app
