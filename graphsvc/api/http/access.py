"""Every ``/v1`` route says the scope it needs where it is declared; one function enforces it.

A FastAPI route declares ``**guarded(Scope.READ)`` in its decorator: the scope and the
acting-user rule go to the OpenAPI document (the security requirement, ``x-required-scope``)
and a dependency calls ``admit`` (a lean route, ``lean.py``, awaits the same dependency
before it reads its parameters). An app with a ``/v1`` route that declares no scope refuses
to start (``check_guarded``).

Order of checks: the key (401), its scope and acting user (403), then the caller's budget
(429), so a refused or anonymous request never spends a budget. The key is checked first of
all, by ``key_first``, which the front layer (``front.py``) calls to answer a ``/v1`` request
without a valid key with its 401 before any route reads its body or parameters (FastAPI reads a
body before it solves dependencies); the route's ``admit`` then authorizes the key it found.
The budget's headers are noted in the request's state; ``noted_headers.noted`` adds them to
the response, whatever the route returns.

What a request costs is declared with its scope too, in requests of the key's budget
(``guarded(Scope.READ, cost=Cost.COMMON)``, in the OpenAPI document as ``x-budget-cost``):
one for what the mirror answers and for a write, more for the routes that make Neo4j work
(``Cost``). A route the mirror answers until a page runs past its hot list (followers,
following) also declares ``graph_cost``: when the request read Neo4j where the mirror
usually answers (``concurrency.request_notes``), the difference is charged as the answer is sent, so a
walk deep into a celebrity's followers pays for every page Neo4j serves; that request is
answered, and the next ones are refused sooner.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.routing import APIRoute
from starlette.responses import Response
from starlette.types import Scope as AsgiScope

from graphsvc.api.http.errors import error_response
from graphsvc.domain.access import (
    VIEWER_HEADER,
    ApiKey,
    AuthThrottled,
    MissingScope,
    ServiceKeyRequired,
    Unauthenticated,
    WrongActingUser,
    authorize,
    bearer_token,
    viewer_of_key,
)
from graphsvc.domain.access import Scope as KeyScope
from graphsvc.domain.privacy import require_own_view
from graphsvc.services.rate_limits import RateLimited
from graphsvc.services.telemetry import AUTH_FAILURES
from graphsvc.wire.ids import USER_ID_PATTERN

SCOPE_FIELD = "x-required-scope"
SECURITY_SCHEME = "ApiKey"
# The path parameter naming the user a write acts for (checked against a user-bound key).
ACTING_USER = "user_id"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BUDGET_HEADERS = "budget_headers"  # the state's key of the budget's response headers
FOUND_KEY = "found_key"  # the state's key of the key KeyFirst authenticated (not authorized)
VIEWER = "viewer"  # the state's key of who reads (domain.privacy.Viewer), set by admit
# The state's key of what the request owes more if it reads Neo4j: (key id, write, requests).
GRAPH_SURCHARGE = "graph_surcharge"


class Cost:
    """What one request spends of its key's budget, in requests, by the work it asks for.
    Each is the bound on what the route makes the graph do, against a page from Redis."""

    MIRROR = 1  # a page or counts from the mirror; a write
    GRAPH = 5  # one bounded Neo4j read: a page past the hot list, relationships of 100 users
    FOLLOWINGS = 10  # a read of one user's followings (MAX_FOLLOWING): friends, familiar ones
    COMMON = 20  # up to 2 x COMMON_SCAN_MAX entries examined (common followers / following)
    SUGGESTIONS = 20  # candidate queries over a two- and three-hop neighbourhood, ranked


def requires(
    scope: KeyScope,
    *,
    acts_as_user: bool = False,
    service_only: bool = False,
    cost: int = Cost.MIRROR,
    graph_cost: int | None = None,
) -> dict[str, Any]:
    """The route's ``openapi_extra``: its scope, whether ``{user_id}`` is the user it acts
    for, whether it takes service keys only, and what a request of it costs. A read also
    documents the viewer a service key may name."""
    viewer = [VIEWER_PARAMETER] if scope is KeyScope.READ else []
    return {
        **({"parameters": viewer} if viewer else {}),
        SCOPE_FIELD: scope.value,
        "x-acts-as-path-user": acts_as_user,
        "x-service-key-only": service_only,
        "x-budget-cost": cost,
        **({"x-budget-cost-from-neo4j": graph_cost} if graph_cost else {}),
        "security": [{SECURITY_SCHEME: []}],
    }


VIEWER_PARAMETER = {
    "name": VIEWER_HEADER,
    "in": "header",
    "required": False,
    "description": "the user this read is for (a service key only; a key bound to a user "
    "reads as that user and may name only itself): lists, counts and derived answers follow "
    "what that user may see of others' networks. Absent: an anonymous viewer, who sees what is "
    "public; an admin or internal key that names no one sees everything",
    "schema": {"type": "string", "pattern": USER_ID_PATTERN, "minLength": 1, "maxLength": 64},
}

AUTH_ERRORS = {
    "401": "no API key, or an unknown or revoked one (see WWW-Authenticate)",
    "403": "the key lacks the route's scope, acts as another user, or is bound to a user on "
    "a route for service keys only",
    "429": "the key's request budget is spent (see Retry-After and RateLimit-*)",
}


def client_address(scope: AsgiScope) -> str | None:
    """The caller's address as the server saw it (behind a proxy, the server's proxy-headers
    setting makes it the forwarded one): whose failed authentications are counted."""
    client = scope.get("client")
    return str(client[0]) if client else None


async def key_first(scope: AsgiScope) -> Response | None:
    """The 401 of a ``/v1`` request without a valid key, before anything else reads it; else
    None, the key it found noted for ``admit``. A store that cannot be reached decides nothing
    here: the route's ``admit`` asks again, where its failure is answered as every store
    failure is (503)."""
    header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
    try:
        key = await scope["app"].state.services.access.authenticate(
            bearer_token(header.decode("latin-1") if header is not None else None),
            client_address(scope),
        )
    except (Unauthenticated, AuthThrottled) as refused:
        AUTH_FAILURES.labels(str(refused.status)).inc()
        return error_response(refused.status, refused.code, refused.message, refused.headers)
    except Exception:
        return None
    scope.setdefault("state", {})[FOUND_KEY] = key
    return None


async def admit(
    request: Request,
    needed: KeyScope,
    *,
    acts_as_user: bool = False,
    service_only: bool = False,
    cost: int = Cost.MIRROR,
    graph_cost: int | None = None,
) -> ApiKey:
    """Authenticate (unless ``KeyFirst`` did), authorize and charge the request's ``cost``;
    the key, also noted in its state. ``graph_cost``: what the request costs if it reads
    Neo4j where the mirror usually answers (the rest is charged as the answer is sent)."""
    services = request.app.state.services
    state = request.scope.setdefault("state", {})
    try:
        key = state.get(FOUND_KEY) or await services.access.authenticate(
            bearer_token(request.headers.get("authorization")), client_address(request.scope)
        )
        acting = request.path_params.get(ACTING_USER) if acts_as_user else None
        authorize(key, needed, acting, service_only=service_only)
        viewer = viewer_of_key(key, request.headers.get(VIEWER_HEADER))
    except (Unauthenticated, MissingScope, WrongActingUser, ServiceKeyRequired) as refused:
        AUTH_FAILURES.labels(str(refused.status)).inc()
        raise
    if acting is not None and request.method in READ_METHODS:
        require_own_view(viewer, acting, f"{request.method} {request.url.path}")
    write = request.method not in READ_METHODS
    budget = await services.rate_limits.spend(key.id, write=write, cost=cost)
    if budget is not None and not budget.allowed:
        raise RateLimited(budget)
    state["api_key"] = key
    state[VIEWER] = viewer
    if budget is not None:
        state[BUDGET_HEADERS] = budget.headers()
        if graph_cost is not None and graph_cost > cost:
            state[GRAPH_SURCHARGE] = (key.id, write, graph_cost - cost)
    return key


class Admission:
    """The dependency of a guarded FastAPI route (``guarded``)."""

    def __init__(
        self,
        needed: KeyScope,
        acts_as_user: bool,
        service_only: bool = False,
        cost: int = Cost.MIRROR,
        graph_cost: int | None = None,
    ) -> None:
        self.needed = needed
        self.acts_as_user = acts_as_user
        self.service_only = service_only
        self.cost = cost
        self.graph_cost = graph_cost

    async def __call__(self, request: Request) -> None:
        await admit(
            request,
            self.needed,
            acts_as_user=self.acts_as_user,
            service_only=self.service_only,
            cost=self.cost,
            graph_cost=self.graph_cost,
        )


def guarded(
    scope: KeyScope,
    *,
    acts_as_user: bool = False,
    service_only: bool = False,
    cost: int = Cost.MIRROR,
    graph_cost: int | None = None,
) -> dict[str, Any]:
    """A route decorator's arguments for a route that needs ``scope``; ``acts_as_user``:
    ``{user_id}`` is the user it acts for, or whose own view it reads (a timeline, the
    suggestions, the event stream, the friends by closeness, relationships with blocks), so
    a user-bound key may use it only for its own user: a read by someone else must neither
    see another's private view nor mark them active or rebuild their home. ``service_only``:
    a user-bound key may not use it at all (403 ``service_key_required``). ``cost``: the
    requests of the key's budget one request spends (``Cost``); ``graph_cost``: what it
    spends in all when it reads Neo4j where the mirror usually answers. A read with
    ``acts_as_user`` is the user's own view: a service key naming another viewer gets 403
    ``owner_only``."""
    extra = requires(
        scope,
        acts_as_user=acts_as_user,
        service_only=service_only,
        cost=cost,
        graph_cost=graph_cost,
    )
    admission = Admission(scope, acts_as_user, service_only, cost, graph_cost)
    return {"openapi_extra": extra, "dependencies": [Depends(admission)]}


def check_guarded(app: FastAPI) -> None:
    """Refuse to build an app with an unguarded ``/v1`` FastAPI route."""
    for route in app.router.routes:
        if not isinstance(route, APIRoute) or not route.path.startswith("/v1/"):
            continue
        if not any(isinstance(d.dependency, Admission) for d in route.dependencies):
            raise RuntimeError(f"{sorted(route.methods)} {route.path} declares no scope")


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
