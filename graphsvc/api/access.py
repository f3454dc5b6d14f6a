"""Every ``/v1`` route says the scope it needs; this module enforces it, in one place.

A route declares ``openapi_extra=requires(Scope.READ)`` (the OpenAPI document then shows the
security requirement and the scope); ``guard_routes`` wraps each such route's ASGI app with
``Guard`` when the app is built. Wrapping the matched route, rather than a middleware that
matches routes a second time, costs nothing on routes that need no key (probes, metrics,
docs), reads path parameters already parsed (the acting user), and leaves 404 and 405 to the
router. A ``/v1`` route that forgets to declare a scope stops the app from starting.

Order of checks: the key (401), its scope and acting user (403), then the caller's budget
(429), so a refused or anonymous request never spends a budget.
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.domain.access import (
    MissingScope,
    Unauthenticated,
    WrongActingUser,
    authorize,
    bearer_token,
)
from graphsvc.domain.access import Scope as KeyScope
from graphsvc.services.rate_limits import RateLimited
from graphsvc.services.telemetry import AUTH_FAILURES

SCOPE_FIELD = "x-required-scope"
SECURITY_SCHEME = "ApiKey"
# The path parameter naming the user a write acts for (checked against a user-bound key).
ACTING_USER = "user_id"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def requires(scope: KeyScope, *, acts_as_user: bool = False) -> dict[str, Any]:
    """The route's ``openapi_extra``: its scope, and whether ``{user_id}`` is the user it
    acts for (a user-bound key may act only as its user)."""
    return {
        SCOPE_FIELD: scope.value,
        "x-acts-as-path-user": acts_as_user,
        "security": [{SECURITY_SCHEME: []}],
    }


AUTH_ERRORS = {
    "401": "no API key, or an unknown or revoked one (see WWW-Authenticate)",
    "403": "the key lacks the route's scope, or acts as another user",
    "429": "the key's request budget is spent (see Retry-After and RateLimit-*)",
}


class Guard:
    """Authenticate, authorize and rate-limit one route's requests."""

    def __init__(self, app: ASGIApp, needed: KeyScope, acts_as_user: bool) -> None:
        self.app = app
        self.needed = needed
        self.acts_as_user = acts_as_user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        services = scope["app"].state.services
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        try:
            key = await services.access.authenticate(
                bearer_token(header.decode("latin-1") if header is not None else None)
            )
            acting = scope["path_params"].get(ACTING_USER) if self.acts_as_user else None
            authorize(key, self.needed, acting)
        except (Unauthenticated, MissingScope, WrongActingUser) as refused:
            AUTH_FAILURES.labels(str(refused.status)).inc()
            raise
        write = scope["method"] not in READ_METHODS
        budget = await services.rate_limits.spend(key.id, write=write)
        if budget is not None and not budget.allowed:
            raise RateLimited(budget)
        scope.setdefault("state", {})["api_key"] = key
        if budget is None:
            await self.app(scope, receive, send)
            return
        extra = [(name.lower().encode(), value.encode()) for name, value in budget.headers()]

        async def send_with_budget(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_budget)


def guard_routes(app: FastAPI) -> None:
    """Wrap every route that declares a scope; refuse to build an app with an unguarded
    ``/v1`` route."""
    routes = app.router.routes
    for n, route in enumerate(routes):
        if not isinstance(route, APIRoute):
            continue
        extra = route.openapi_extra or {}
        needed = extra.get(SCOPE_FIELD)
        if needed is None:
            if route.path.startswith("/v1/"):
                raise RuntimeError(f"{sorted(route.methods)} {route.path} declares no scope")
            continue
        # The routers' route objects are shared by every app built (tests build many): each
        # app guards its own copy, never one already guarded by another.
        guarded = copy.copy(route)
        guarded.app = Guard(route.app, KeyScope(needed), bool(extra.get("x-acts-as-path-user")))
        routes[n] = guarded


def document_security(schema: dict[str, Any]) -> dict[str, Any]:
    """The bearer scheme (the Authorize button of /docs), and the auth errors of every
    guarded operation, in the one error shape; a status the route documents already (403)
    names both reasons."""
    schema.setdefault("components", {})["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "an API key: `graphsvc keys create --scopes read,write`",
        }
    }
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            if SCOPE_FIELD not in operation:
                continue
            responses = operation.setdefault("responses", {})
            for status, reason in AUTH_ERRORS.items():
                own = responses.get(status)
                described = f"{own['description']}; or {reason}" if own else reason
                responses[status] = {"description": described, "content": body}
    return schema
