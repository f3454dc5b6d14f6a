"""The hottest routes, served as plain Starlette routes written out by hand: the followers and
following pages, the counts, follow and unfollow.

Why: FastAPI solves every route's parameters and dependencies by inspecting their
declarations on every request; for a page served from Redis in about a millisecond that was a
quarter of the API process's CPU (cProfile of a served process), and a dependency for the key
check another 50-150 us. These five routes take few and plain parameters, so each handler
below reads them itself, in the framework's public terms (``request.path_params``,
``request.query_params``), checks the key first (``admit``), and calls the same service as its
FastAPI declaration.

Their FastAPI declarations (``lists.py``, ``relations.py``) stay: they are what the OpenAPI
document shows, with every bound, and they answer exactly as these do (a test asks both the
same questions). ``create_app`` puts these routes first, so they are the ones that serve.

Parameters are converted by pydantic, as FastAPI converts them: the same values are accepted
(``limit=02``, ``flag=yes``) and the same ones refused, as a 422 ``invalid_request`` naming the
parameter. Bounds (a limit's range, an id's pattern) are the services' rules, as for every route.
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Scope as AsgiScope

from graphsvc.api.access import Cost, admit
from graphsvc.api.params import (
    counts_body,
    follow_body,
    page_body,
    services_of,
    unfollow_body,
    viewer_of,
)
from graphsvc.domain.access import Scope

_INTEGER = TypeAdapter(int)
_FLAG = TypeAdapter(bool)


def _converted(request: Request, name: str, adapter: TypeAdapter[Any], default: Any) -> Any:
    """A query parameter by pydantic's rules, or ``default`` when it is absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise RequestValidationError([{**error, "loc": ("query", name), "input": raw}]) from None


def _limit(request: Request) -> int | None:
    return _converted(request, "limit", _INTEGER, None)


def _flag(request: Request, name: str) -> bool:
    return _converted(request, name, _FLAG, False)


async def followers(request: Request) -> Response:
    await admit(request, Scope.READ, cost=Cost.MIRROR, graph_cost=Cost.GRAPH)
    page = await services_of(request).lists.followers(
        request.path_params["user_id"],
        _limit(request),
        request.query_params.get("cursor"),
        viewer=viewer_of(request),
        not_followed_back=_flag(request, "not_followed_back"),
    )
    return page_body(page)


async def following(request: Request) -> Response:
    await admit(request, Scope.READ, cost=Cost.MIRROR, graph_cost=Cost.GRAPH)
    page = await services_of(request).lists.following(
        request.path_params["user_id"],
        _limit(request),
        request.query_params.get("cursor"),
        viewer=viewer_of(request),
        not_following_back=_flag(request, "not_following_back"),
        celebrities_only=_flag(request, "celebrities_only"),
    )
    return page_body(page)


async def counts(request: Request) -> Response:
    await admit(request, Scope.READ)
    lists = services_of(request).lists
    found = await lists.counts_for(request.path_params["user_id"], viewer_of(request))
    return counts_body(lists, found)


async def follow(request: Request) -> Response:
    await admit(request, Scope.WRITE, acts_as_user=True)
    relations = services_of(request).relations
    result = await relations.follow(
        request.path_params["user_id"],
        request.path_params["target_id"],
        request.query_params.get("recommendation_id"),
    )
    return follow_body(result)


async def unfollow(request: Request) -> Response:
    await admit(request, Scope.WRITE, acts_as_user=True)
    relations = services_of(request).relations
    change = await relations.unfollow(
        request.path_params["user_id"], request.path_params["target_id"]
    )
    return unfollow_body(change)


class HandRoute(Route):
    """A Starlette route for exactly one method (Starlette adds HEAD to a GET; FastAPI's
    routes do not), which names itself in the request's scope as FastAPI's routes do, for the
    metrics and logs by route template."""

    def __init__(self, path: str, endpoint: Any, method: str) -> None:
        super().__init__(path, endpoint, methods=[method])
        self.methods = {method}

    def matches(self, scope: AsgiScope) -> tuple[Match, AsgiScope]:
        match, child = super().matches(scope)
        if match is not Match.NONE:
            child["route"] = self
        return match, child


ROUTES = [
    HandRoute("/v1/users/{user_id}/followers", followers, "GET"),
    HandRoute("/v1/users/{user_id}/following", following, "GET"),
    HandRoute("/v1/users/{user_id}/counts", counts, "GET"),
    HandRoute("/v1/users/{user_id}/following/{target_id}", follow, "PUT"),
    HandRoute("/v1/users/{user_id}/following/{target_id}", unfollow, "DELETE"),
]
