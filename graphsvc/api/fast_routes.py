"""A fast lane for simple routes: well-formed requests skip FastAPI's parameter solving.

Simple routes: GETs, and PUTs and DELETEs without a body (follow, unfollow), whose parameters
are all plain.

FastAPI re-inspects every parameter's annotation on every request (is it a sequence, a
model, which alias...): for the followers page that was about a quarter of the API process's
CPU per request (cProfile of a served process). The routes' parameters here are few and
plain (path strings, an optional int, an optional string, flags), so they are read straight
from the ASGI scope, and the endpoint is called with them.

Only requests whose every parameter is unambiguous take the lane: a missing required
parameter, a repeated one, an empty one, or a value that is not the plain spelling of its
type ("5", "true", "false", "1", "0") goes to the route's own FastAPI handler, which answers it
exactly as before (its value or its 422). The route keeps its declaration, so the OpenAPI
document is unchanged; routes with anything else (bodies, dependencies, headers, constraints
on a parameter, a return that is not a Response) are left as they are.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

_DIGITS = re.compile(r"^[0-9]{1,15}$")
_FLAGS = {"true": True, "1": True, "false": False, "0": False}


class _Unsure(Exception):
    """The request is not plain enough for the lane: FastAPI's handler answers it."""


def _text(value: str) -> str:
    return value


def _integer(value: str) -> int:
    if not _DIGITS.match(value):
        raise _Unsure
    return int(value)


def _flag(value: str) -> bool:
    flag = _FLAGS.get(value)
    if flag is None:
        raise _Unsure
    return flag


_PARSERS: dict[Any, Callable[[str], Any]] = {
    str: _text,
    str | None: _text,
    int: _integer,
    int | None: _integer,
    bool: _flag,
}


class _QueryParam(typing.NamedTuple):
    name: str
    alias: str
    parse: Callable[[str], Any]
    required: bool
    default: Any


class FastLane:
    """A simple route's handler: the plain-request lane, else the route's FastAPI handler."""

    def __init__(
        self,
        endpoint: Callable[..., Awaitable[Response]],
        path_params: list[str],
        query: list[_QueryParam],
        request_param: str | None,
        fallback: ASGIApp,
    ) -> None:
        self.endpoint = endpoint
        self.path_params = path_params
        self.query = query
        self.request_param = request_param
        self.fallback = fallback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            kwargs = self._arguments(scope)
        except _Unsure:
            await self.fallback(scope, receive, send)
            return
        if self.request_param is not None:
            kwargs[self.request_param] = Request(scope, receive, send)
        response = await self.endpoint(**kwargs)
        await response(scope, receive, send)

    def _arguments(self, scope: Scope) -> dict[str, Any]:
        path = scope["path_params"]
        kwargs: dict[str, Any] = {name: path[name] for name in self.path_params}
        given: dict[str, str] = {}
        if scope["query_string"]:
            for key, value in parse_qsl(
                scope["query_string"].decode("latin-1"), keep_blank_values=True
            ):
                if key in given or value == "":
                    raise _Unsure
                given[key] = value
        for param in self.query:
            value = given.get(param.alias)
            if value is None:
                if param.required:
                    raise _Unsure
                kwargs[param.name] = param.default
            else:
                kwargs[param.name] = param.parse(value)
        return kwargs


def fast_lane(route: APIRoute) -> FastLane | None:
    """The lane for ``route``, or None when its parameters are not all plain."""
    dependant = route.dependant
    if (
        route.methods not in ({"GET"}, {"PUT"}, {"DELETE"})
        or dependant.dependencies
        or dependant.header_params
        or dependant.cookie_params
        or dependant.body_params
        or dependant.background_tasks_param_name
        or dependant.response_param_name
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.security_scopes_param_name
    ):
        return None
    try:
        returned = typing.get_type_hints(route.endpoint).get("return")
    except (NameError, TypeError):  # an annotation that cannot be resolved: leave the route
        return None
    if not (isinstance(returned, type) and issubclass(returned, Response)):
        return None
    for field in dependant.path_params:
        if field.field_info.annotation is not str or field.field_info.metadata:
            return None
    query = []
    for field in dependant.query_params:
        info = field.field_info
        parse = _PARSERS.get(_plain(info.annotation))
        if parse is None or info.metadata:
            return None
        required = info.is_required()
        query.append(_QueryParam(field.name, field.alias, parse, required, info.default))
    return FastLane(
        route.endpoint,
        [field.name for field in dependant.path_params],
        query,
        dependant.request_param_name,
        route.app,
    )


def _plain(annotation: Any) -> Any:
    """``Optional[int]`` and ``int | None`` alike, as ``int | None``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if len(args) == 2 and type(None) in args:
            (inner,) = (arg for arg in args if arg is not type(None))
            return inner | None
    return annotation


def add_fast_lanes(app: FastAPI) -> None:
    """Give every simple route the lane (each app its own copy of the shared route)."""
    routes = app.router.routes
    for n, route in enumerate(routes):
        if isinstance(route, APIRoute):
            lane = fast_lane(route)
            if lane is not None:
                faster = copy.copy(route)
                faster.app = lane
                routes[n] = faster
