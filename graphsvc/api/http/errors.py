"""One error shape for every failure: ``{"error": {"code": ..., "message": ...}}``.

The services raise the ``GraphError`` family (each knows its status and code), a graph
statement cut off by its transaction timeout included (``GraphTimeout``: a 503
``graph_timeout`` with Retry-After); request validation, routing, and the stores being down
are mapped here too, so no route handles an error itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from graphsvc.domain.errors import GraphError
from graphsvc.services.failures import NEO4J_UNAVAILABLE, REDIS_UNAVAILABLE
from graphsvc.wire.ids import quoted
from graphsvc.wire.schemas import ErrorBody

log = logging.getLogger(__name__)


# The error responses every route documents; follows add their refusals.
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "unparseable or tampered cursor"},
    422: {"model": ErrorBody, "description": "invalid user id, limit, parameter or self-follow"},
    503: {
        "model": ErrorBody,
        "description": "a backing store is unavailable, or a graph statement ran past its "
        "transaction timeout (graph_timeout)",
    },
}
FOLLOW_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "a block, or a suspended user, forbids it"},
    409: {
        "model": ErrorBody,
        "description": "MAX_FOLLOWING or FOLLOW_REQUESTS_MAX reached, or a user is being erased",
    },
    429: {"model": ErrorBody, "description": "FOLLOWS_PER_DAY reached (see Retry-After)"},
}

BLOCK_ERRORS: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "MAX_BLOCKS reached (block_limit)"},
}
REMOVAL_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "a user removing itself (self_action)"},
}
OWNER_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "read as someone other than the owner (owner_only)"},
}

# Lists read for a viewer: a list (or one an answer derives from) its owner hides from it.
HIDDEN: dict[int | str, dict[str, Any]] = {
    403: {
        "model": ErrorBody,
        "description": "network_hidden: the owner's privacy setting hides this list (or a list "
        "the answer is derived from) from the viewer; the message names the setting and value",
    }
}

POST_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "no such post"},
    409: {
        "model": ErrorBody,
        "description": "the post exists with another time, or was deleted, or its author is "
        "being erased (`user_erasing`)",
    },
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def describe_validation(exc: RequestValidationError) -> str:
    """Every invalid parameter, by where it was and what was wrong, with a short prefix of the
    value given (never a whole body: a document or list is not repeated at all)."""
    parts = []
    for err in exc.errors():
        where, *names = err.get("loc", ("request",))
        name = ".".join(str(n) for n in names) or str(where)
        given = err.get("input")
        shown = (
            f" (got {quoted(given)})"
            if given is not None and not isinstance(given, dict | list)
            else ""
        )
        parts.append(f"{where} parameter {name!r}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts) or "invalid request"


async def graph_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GraphError)
    return error_response(exc.status, exc.code, exc.message, exc.headers)


async def invalid_request(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "invalid_request", describe_validation(exc))


def allowed_methods(request: Request) -> str:
    """Every method some route serves at this path: the router's own 405 names only the
    first route that matched the path, though PUT and DELETE of one path are two routes."""
    matching = [
        route
        for route in request.app.router.routes
        if route.matches(request.scope)[0] is not Match.NONE and getattr(route, "methods", None)
    ]
    if not matching:
        return ""
    # The most specific template owns the path: .../suggestions/impressions is the POST of
    # impressions, though the DELETE of .../suggestions/{target_id} would match it too.
    fewest = min(route.path.count("{") for route in matching)
    methods = {m for r in matching if r.path.count("{") == fewest for m in r.methods}
    return ", ".join(sorted(methods))


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    headers = dict(getattr(exc, "headers", None) or {})
    if exc.status_code == 405:
        headers["Allow"] = allowed_methods(request) or headers.get("Allow", "")
    return error_response(exc.status_code, code, str(exc.detail), headers or None)


def _unavailable(
    store: str, code: str, what: str
) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
    """A 503 with Retry-After for a store that cannot be reached (logged, never a 500)."""

    async def handle(_: Request, exc: Exception) -> JSONResponse:
        log.warning("%s unavailable: %s", store, exc)
        message = f"the {what} is unavailable; retry later"
        return error_response(503, code, message, {"Retry-After": "1"})

    return handle


neo4j_down = _unavailable("neo4j", "neo4j_unavailable", "graph database")
redis_down = _unavailable("redis", "redis_unavailable", "relation cache")


async def unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return error_response(500, "internal", "internal error")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(GraphError, graph_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, http_error)
    for neo4j_error in NEO4J_UNAVAILABLE:
        app.add_exception_handler(neo4j_error, neo4j_down)
    for redis_error in REDIS_UNAVAILABLE:
        app.add_exception_handler(redis_error, redis_down)
    app.add_exception_handler(Exception, unexpected)
