"""Lean routes: declared and documented as every FastAPI route, served without FastAPI's
per-request machinery.

Why: FastAPI solves a route's parameters and dependencies by walking its declarations on
every request. For a page or a count the mirror answers from memory, that walk was a large
share of the API process's CPU (docs/performance.md). A lean route keeps the one
declaration (the decorator, the ``Annotated`` parameters with their bounds, ``guarded(...)``),
so its OpenAPI entry is FastAPI's own; only the way a request reaches the endpoint differs:
each parameter's converter is built once, when the route is declared, from the endpoint's
signature, and the admission of ``guarded`` is awaited directly.

A router made with ``route_class=LeanRoute`` serves its routes so. ``LeanRoutes``, asked by
the app's front layer (``front.py``), matches them before the framework's router, so a lean
request skips its exception middleware, its router's walk of every route and its per-request
exit stacks; the app's own exception handlers answer its failures, as they answer every
route's. What such an endpoint may
take is checked when it is declared, and anything else refuses to build the app:

- path and query parameters, ``Annotated[T, Path(...)]`` / ``Annotated[T, Query(...)]``, with
  a default or required, converted by pydantic as FastAPI converts them (``limit=02`` is 2,
  ``flag=yes`` is true; a bad value is the same 422 naming the parameter);
- the ``Request``;
- ``guarded(...)`` as its only dependency;
- a ``Response`` as what it returns (the body the endpoint shaped).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import params
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Receive, Send
from starlette.types import Scope as AsgiScope

from graphsvc.api.http.access import Admission

_ABSENT = object()


@dataclass(frozen=True, slots=True)
class _Parameter:
    name: str  # the endpoint's argument
    alias: str  # the name in the path or the query string
    in_path: bool
    default: Any  # _ABSENT: required
    adapter: TypeAdapter[Any] | None  # None: the text as it came


class LeanRoute(APIRoute):
    """An ``APIRoute`` whose handler reads its parameters with converters built at declaration
    (the route stays FastAPI's for matching, the OpenAPI document and the error handlers)."""

    lean_handler: Callable[[Request], Awaitable[Response]]  # what the lane awaits

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        endpoint = self.endpoint
        where = f"{sorted(self.methods)} {self.path}"
        admission = _admission(self.dependencies, where)
        parameters, wants_request = _parameters(endpoint, where)

        async def handler(request: Request) -> Response:
            await admission(request)
            arguments = _arguments(request, parameters)
            if wants_request is not None:
                arguments[wants_request] = request
            return await endpoint(**arguments)

        self.lean_handler = handler
        return handler

    def matches(self, scope: AsgiScope) -> tuple[Match, AsgiScope]:
        """Starlette's match, naming the route in the scope as FastAPI's routes do (for the
        metrics by route template); a lean route is always the app's own, never one included
        through another router, so FastAPI's lookup of an inclusion is left out."""
        match, child = Route.matches(self, scope)
        if match is not Match.NONE:
            child["route"] = self
        return match, child


class LeanRoutes:
    """The lean routes, matched and served before the framework's router.

    The front layer (``front.py``) asks for a request's lean route after the key check and
    the body bound, and serves it here, outside the framework's exception middleware: a lean
    route's failure is answered by the handler the app registered for its class (the one error
    family); an exception no handler but the catch-all's knows is raised on, to the
    server-error middleware, as from any route."""

    def __init__(self, routes: Sequence[LeanRoute]) -> None:
        self._routes: dict[str, list[LeanRoute]] = {}
        for route in routes:
            for method in route.methods:
                self._routes.setdefault(method, []).append(route)
        self._handlers: dict[type[BaseException], Any] | None = None

    def match(self, scope: AsgiScope) -> LeanRoute | None:
        """The request's lean route, its path parameters put in the scope; None: not lean."""
        for route in self._routes.get(scope["method"], ()):
            match, child = route.matches(scope)
            if match is Match.FULL:
                scope.update(child)
                return route
        return None

    async def serve(self, route: LeanRoute, scope: AsgiScope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        try:
            response = await route.lean_handler(request)
        except Exception as exc:
            handler = self._handler_for(scope, exc)
            if handler is None:
                raise
            response = await handler(request, exc)
        await response(scope, receive, send)

    def _handler_for(self, scope: AsgiScope, exc: Exception) -> Any:
        if self._handlers is None:  # the app's handlers, once it is built
            registered = scope["app"].exception_handlers
            self._handlers = {
                key: handler
                for key, handler in registered.items()
                if isinstance(key, type) and key is not Exception
            }
        return next((self._handlers[c] for c in type(exc).__mro__ if c in self._handlers), None)


def _admission(dependencies: list[params.Depends], where: str) -> Admission:
    found = [d.dependency for d in dependencies]
    if len(found) != 1 or not isinstance(found[0], Admission):
        raise TypeError(f"lean route {where} must declare guarded(...) as its only dependency")
    return found[0]


def _parameters(endpoint: Callable[..., Any], where: str) -> tuple[list[_Parameter], str | None]:
    """The endpoint's parameters, and the name of its ``Request`` argument (None: none)."""
    if not inspect.iscoroutinefunction(endpoint):
        raise TypeError(f"lean route {where} must be served by a coroutine function")
    hints = typing.get_type_hints(endpoint, include_extras=True)
    answer = hints.get("return")
    if not (inspect.isclass(answer) and issubclass(answer, Response)):
        raise TypeError(f"lean route {where} must return a Response")
    found: list[_Parameter] = []
    wants_request: str | None = None
    for name, declared in inspect.signature(endpoint).parameters.items():
        hint = hints.get(name)
        if hint is Request:
            wants_request = name
            continue
        found.append(_parameter(name, hint, declared.default, where))
    return found, wants_request


def _parameter(name: str, hint: Any, default: Any, where: str) -> _Parameter:
    info = _field_info(hint)
    if not isinstance(info, params.Path | params.Query):
        raise TypeError(
            f"lean route {where}: parameter {name!r} must be Annotated with Path(...) or "
            "Query(...) (a body or a dependency needs FastAPI's own handler)"
        )
    base = typing.get_args(hint)[0]
    plain_text = base in (str, str | None) and not info.metadata
    return _Parameter(
        name=name,
        alias=info.alias or name,
        in_path=isinstance(info, params.Path),
        default=_ABSENT if default is inspect.Parameter.empty else default,
        adapter=None if plain_text else TypeAdapter(Annotated[base, info]),
    )


def query_of(scope: AsgiScope) -> dict[str, str]:
    """The query string's parameters, the last of a repeated one winning, as the framework's
    ``query_params.get`` answers; a plain query string (no escapes) is split here, without
    the general parser."""
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return {}
    if b"%" in raw or b"+" in raw:
        return dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True))
    found: dict[str, str] = {}
    for pair in raw.decode("latin-1").split("&"):
        if pair:
            name, _, value = pair.partition("=")
            found[name] = value
    return found


def _field_info(hint: Any) -> Any:
    if typing.get_origin(hint) is not Annotated:
        return None
    return next((m for m in typing.get_args(hint)[1:] if isinstance(m, params.Param)), None)


def _arguments(request: Request, parameters: list[_Parameter]) -> dict[str, Any]:
    """Each parameter converted, or one 422 naming every parameter that was refused (as
    FastAPI answers: all the request's errors at once)."""
    arguments: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    path, query = request.path_params, query_of(request.scope)
    for parameter in parameters:
        where, source = ("path", path) if parameter.in_path else ("query", query)
        raw = source.get(parameter.alias)
        if raw is None:
            if parameter.default is _ABSENT:
                loc = (where, parameter.alias)
                errors.append(
                    {"type": "missing", "loc": loc, "msg": "Field required", "input": None}
                )
            else:
                arguments[parameter.name] = parameter.default
            continue
        if parameter.adapter is None:
            arguments[parameter.name] = raw
            continue
        try:
            arguments[parameter.name] = parameter.adapter.validate_python(raw)
        except ValidationError as exc:
            loc = (where, parameter.alias)
            errors += [{**error, "loc": loc, "input": raw} for error in exc.errors()]
    if errors:
        raise RequestValidationError(errors)
    return arguments
