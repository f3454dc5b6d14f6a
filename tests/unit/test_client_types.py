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
ASYNC_ONLY = {"new_followers", "aclose"}


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
        else:
            assert inspect.iscoroutinefunction(aio[name]), name
            assert awaited == answer, name
