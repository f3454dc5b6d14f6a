"""A lean route answers as FastAPI's own handler answers for the same declaration, and a
declaration it cannot serve faithfully refuses to build.

Both engines serve the same endpoint functions here: the declaration is written once and
registered twice, once per route class, so what is compared is the routing layer alone."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.routing import APIRoute
from pydantic import BaseModel

from graphsvc.api.http.access import Admission
from graphsvc.api.http.bodies import FastJSON
from graphsvc.api.http.errors import install_error_handlers
from graphsvc.api.http.front import Front
from graphsvc.api.http.lean import LeanRoute
from graphsvc.api.http.params import Limit
from graphsvc.domain.access import Scope


class Admitted(Admission):
    """The admission of ``guarded``, noting that it ran instead of asking the key store: the
    key checks themselves are tested against the real stores."""

    async def __call__(self, request: Request) -> None:
        request.scope.setdefault("state", {})["admitted"] = True


ADMITTED = {"dependencies": [Depends(Admitted(Scope.READ, acts_as_user=False))]}


async def page(
    user_id: Annotated[str, Path()],
    request: Request,
    limit: Limit = None,
    cursor: Annotated[str | None, Query(max_length=8)] = None,
    flag: Annotated[bool, Query()] = False,
    renamed: Annotated[int, Query(alias="size", ge=1, le=10)] = 5,
) -> FastJSON:
    admitted = request.scope["state"].get("admitted", False)
    values = {"limit": limit, "cursor": cursor, "flag": flag, "size": renamed}
    return FastJSON({"user_id": user_id, "admitted": admitted, **values})


async def needs(ids: Annotated[str, Query()], request: Request) -> FastJSON:
    return FastJSON({"ids": ids.split(",")})


async def broken(request: Request) -> FastJSON:
    raise RuntimeError("a bug")


def app(route_class: type[APIRoute]) -> FastAPI:
    """The declarations served by ``route_class``; lean ones through the front layer, as the service
    serves them."""
    router = APIRouter(route_class=route_class)
    router.get("/users/{user_id}/page", **ADMITTED)(page)
    router.put("/needs", **ADMITTED)(needs)
    router.get("/broken", **ADMITTED)(broken)
    served = FastAPI()
    install_error_handlers(served)
    if route_class is LeanRoute:
        served.add_middleware(
            Front,
            routes=router.routes,
            max_bytes=1_000,
            imports_max_bytes=1_000,
            deadline_seconds=5,
        )
    served.router.routes.extend(router.routes)
    return served


ASKED = [
    "/users/a/page",
    "/users/a/page?limit=2",
    "/users/a/page?limit=02",
    "/users/a/page?limit=abc",
    "/users/a/page?limit=",
    "/users/a/page?limit=-1",
    "/users/a/page?limit=1&limit=2",
    "/users/a/page?cursor=",
    "/users/a/page?cursor=123456789",
    "/users/a/page?flag=yes",
    "/users/a/page?flag=0",
    "/users/a/page?flag=False",
    "/users/a/page?flag=maybe",
    "/users/a/page?size=10",
    "/users/a/page?size=11&limit=x",
    "/users/a/page?renamed=3",
    "/users/a%20b/page?unknown=1",
]


@pytest.mark.parametrize("path", ASKED)
async def test_a_lean_route_answers_as_fastapi_does(path: str) -> None:
    lean, plain = await ask(app(LeanRoute), "GET", path), await ask(app(APIRoute), "GET", path)
    assert lean == plain
    if lean[0] == 200:
        assert lean[1]["admitted"] is True


async def test_a_required_parameter_and_a_method_not_served() -> None:
    for method, path in (("PUT", "/needs"), ("PUT", "/needs?ids=a,b"), ("GET", "/needs")):
        lean = await ask(app(LeanRoute), method, path)
        assert lean == await ask(app(APIRoute), method, path)
    assert (await ask(app(LeanRoute), "PUT", "/needs"))[0] == 422


async def test_the_lane_serves_the_lean_routes_before_the_router() -> None:
    served = app(LeanRoute)
    served.router.routes.clear()  # nothing left for the framework's router to serve
    assert (await ask(served, "GET", "/users/a/page?limit=2"))[1]["limit"] == 2
    assert (await ask(served, "GET", "/users/a/page?limit=x"))[0] == 422
    assert (await ask(served, "GET", "/elsewhere"))[0] == 404


async def test_a_failure_nothing_handles_is_the_one_500_of_every_route() -> None:
    lean, plain = app(LeanRoute), app(APIRoute)
    assert await ask(lean, "GET", "/broken") == await ask(plain, "GET", "/broken")
    assert (await ask(lean, "GET", "/broken"))[1]["error"]["code"] == "internal"


async def ask(served: FastAPI, method: str, path: str) -> tuple[int, Any]:
    transport = httpx.ASGITransport(app=served, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://lean") as client:
        answer = await client.request(method, path)
    return answer.status_code, answer.json()


class Item(BaseModel):
    name: str


async def with_body(item: Item, request: Request) -> FastJSON:
    return FastJSON({})


async def with_model(request: Request) -> Item:
    return Item(name="x")


def plain_function(request: Request) -> FastJSON:
    return FastJSON({})


async def untyped(other: str, request: Request) -> FastJSON:
    return FastJSON({})


@pytest.mark.parametrize(
    ("endpoint", "options", "refusal"),
    [
        (with_body, ADMITTED, "parameter 'item' must be Annotated"),
        (untyped, ADMITTED, "parameter 'other' must be Annotated"),
        (with_model, ADMITTED, "must return a Response"),
        (plain_function, ADMITTED, "coroutine function"),
        (needs, {}, "guarded"),
        (needs, {"dependencies": [*ADMITTED["dependencies"], Depends(needs)]}, "guarded"),
    ],
)
def test_a_declaration_a_lean_route_cannot_serve_refuses_to_build(
    endpoint: Any, options: dict[str, Any], refusal: str
) -> None:
    router = APIRouter(route_class=LeanRoute)
    with pytest.raises(TypeError, match=refusal):
        router.put("/x", **options)(endpoint)
