"""The clients' methods say what they answer, and the two clients say the same: an ``Any``
anywhere in a public method's return type is a hole a caller's type checker cannot see
through (``make lint``'s mypy only catches an ``Any`` returned where a type is declared), and
a parameter or answer the two clients disagree on is a route the async client asks otherwise."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, get_type_hints

import networkx
import pandas
import pytest

from graphsvc.client import AsyncGraphClient, AsyncListing, GraphClient, Listing
from graphsvc.wire import schemas

# what the annotations name only for a type checker (imported on first use at run time)
OPTIONAL = {"networkx": networkx, "pandas": pandas}
SYNC_ONLY = {"counts_many", "relationships_many", "ego_graph", "subgraph", "close"}
ASYNC_ONLY = {"aclose"}


def _public(cls: type) -> dict[str, Callable[..., Any]]:
    return {
        name: member
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def _answer(method: Callable[..., Any]) -> Any:
    return get_type_hints(method, localns=OPTIONAL)["return"]


def _holds_any(hint: Any) -> bool:
    return hint is Any or any(_holds_any(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("cls", [GraphClient, AsyncGraphClient, Listing, AsyncListing])
def test_no_public_method_answers_any(cls: type) -> None:
    methods = _public(cls)
    assert len(methods) >= 2
    untyped = [name for name, method in methods.items() if _holds_any(_answer(method))]
    assert not untyped, f"{cls.__name__} answers Any from {untyped}"
    unannotated = [
        f"{name}({parameter})"
        for name, method in methods.items()
        for parameter in list(inspect.signature(method).parameters)[1:]
        if parameter not in get_type_hints(method, localns=OPTIONAL)
    ]
    assert not unannotated


def test_the_route_methods_answer_their_schemas() -> None:
    assert _answer(GraphClient.follow) is schemas.FollowBody
    assert _answer(GraphClient.counts) is schemas.CountsBody
    assert _answer(GraphClient.followers) == Listing[schemas.PageBody]
    assert _answer(GraphClient.common_following) == Listing[schemas.IdPageBody]
    assert _answer(GraphClient.timeline) == Listing[schemas.TimelineBody]
    assert _answer(GraphClient.counts_many) == dict[str, schemas.CountsBody]
    assert _answer(AsyncGraphClient.followers) == AsyncListing[schemas.PageBody]
    assert _answer(GraphClient.remove_follower) is schemas.RemoveFollowerBody
    assert _answer(AsyncGraphClient.remove_followers) is schemas.RemoveFollowersBody
    assert _answer(GraphClient.blocks) == Listing[schemas.PageBody]
    assert _answer(AsyncGraphClient.blocks) == AsyncListing[schemas.PageBody]


def test_both_clients_have_the_same_routes_with_the_same_signatures() -> None:
    sync, aio = _public(GraphClient), _public(AsyncGraphClient)
    assert set(sync) - SYNC_ONLY == set(aio) - ASYNC_ONLY
    for name in set(sync) - SYNC_ONLY:
        assert inspect.signature(sync[name]).parameters == inspect.signature(aio[name]).parameters
        answer, awaited = _answer(sync[name]), _answer(aio[name])
        if typing.get_origin(answer) is Listing:
            # a paged list is walked with ``async for``: the method itself is not awaited
            assert not inspect.iscoroutinefunction(aio[name]), name
            assert typing.get_args(awaited) == typing.get_args(answer), name
            assert typing.get_origin(awaited) is AsyncListing, name
        elif inspect.isasyncgenfunction(aio[name]):  # a stream: ``async for`` over the same
            assert typing.get_args(awaited) == typing.get_args(answer), name
        else:
            assert inspect.iscoroutinefunction(aio[name]), name
            assert awaited == answer, name


def test_the_blocking_client_is_generated_from_the_async_one() -> None:
    """Written once: the committed blocking files are what the generator writes now."""
    from graphsvc.client import _generate

    assert _generate.stale() == [], "run `make generate`"


def test_every_code_the_server_sends_is_in_the_clients_set() -> None:
    """The closed set of ``GraphError.code``: the domain's error family, the HTTP layer's own
    answers and the stream's closing codes, read from the server's code."""
    import re
    from pathlib import Path

    import graphsvc.api.app
    from graphsvc.client.errors import ERROR_CODES
    from graphsvc.domain.errors import GraphError as ServerError

    def family(cls: type[ServerError]) -> set[str]:
        return {cls.code} | {code for sub in cls.__subclasses__() for code in family(sub)}

    api = Path(graphsvc.api.app.__file__).parent
    literal = re.compile(
        r'(?:"code": |code = |error_response\(\s*\d+,\s*|_unavailable\("\w+", |'
        r'status_code, |\d{3}: )"([a-z][a-z0-9_]+)"'
    )
    http = {
        code
        for name in ("http/errors.py", "http/body_limit.py", "routes/events.py")
        for code in literal.findall((api / name).read_text())
    }
    assert {"not_found", "http_error", "redis_unavailable", "body_too_large"} <= http
    sent = family(ServerError) | http
    assert sent - ERROR_CODES == set()
