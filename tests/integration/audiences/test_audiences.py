"""Audiences against the real servers: counts and pages of set algebra over users' lists equal
the same algebra computed with networkx on the graph the test made, within the bound and (as
a lower bound, an estimate and short pages that still walk everything) past it; every list
named is checked for the viewer; a bad expression is named."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import networkx as nx
import pytest

from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


def _expected(graph: nx.DiGraph, expr: dict[str, Any]) -> set[str]:
    """The expression over the graph, with every user a candidate (networkx's answer)."""
    ((key, value),) = expr.items()
    if key == "followers":
        return set(graph.predecessors(value)) if value in graph else set()
    if key == "following":
        return set(graph.successors(value)) if value in graph else set()
    if key == "not":
        return set(graph.nodes) - _expected(graph, value)
    parts = [_expected(graph, part) for part in value]
    return set.intersection(*parts) if key == "and" else set.union(*parts)


@pytest.fixture
async def graph(driver: Driver, uid: UserIds) -> nx.DiGraph:
    rng = random.Random(3)
    users = [uid(f"u{n:02d}") for n in range(40)]
    made = nx.DiGraph()
    made.add_nodes_from(users)
    made.add_edges_from((a, b) for a in users for b in users if a != b and rng.random() < 0.3)
    await driver.follow_pairs(*made.edges)
    return made


def _expressions(u: list[str]) -> list[dict[str, Any]]:
    a, b, c, d = u[0], u[1], u[2], u[3]
    return [
        {"and": [{"followers": a}, {"followers": b}, {"not": {"followers": c}}]},
        {"or": [{"followers": a}, {"following": b}]},
        {"and": [{"following": c}, {"not": {"or": [{"followers": a}, {"following": d}]}}]},
        {"and": [{"or": [{"followers": a}, {"followers": b}]}, {"following": d}]},
        {"followers": a},
    ]


async def test_counts_and_pages_equal_networkx(driver: Driver, graph: nx.DiGraph) -> None:
    users = sorted(graph.nodes)
    for expr in _expressions(users):
        expected = _expected(graph, expr) & set(users)
        counted = await driver.count_audience(expr)
        assert (counted.total, counted.total_is_lower_bound, counted.estimate) == (
            len(expected), False, None,
        ), expr  # fmt: skip
        walked = [user async for user in driver.audience(expr, page_size=3)]
        assert walked == sorted(expected), expr


async def test_past_the_bound_a_lower_bound_an_estimate_and_a_whole_walk(
    make_driver: MakeDriver, graph: nx.DiGraph
) -> None:
    users = sorted(graph.nodes)
    expr = {"and": [{"followers": users[0]}, {"not": {"followers": users[1]}}]}
    expected = sorted(_expected(graph, expr))
    async with make_driver(audience_scan_max=4) as bounded:
        counted = await bounded.count_audience(expr)
        assert counted.total_is_lower_bound and counted.examined == 4
        assert counted.total <= len(expected) and counted.estimate is not None
        assert [user async for user in bounded.audience(expr, page_size=2)] == expected


async def test_pages_past_the_bound_equal_networkx(
    make_driver: MakeDriver, graph: nx.DiGraph
) -> None:
    """A bound below the lists' lengths probes each entry where a list is too long to read
    over the range: the pages still walk the exact audience."""
    users = sorted(graph.nodes)
    async with make_driver(audience_scan_max=5) as bounded:
        for expr in _expressions(users):
            expected = sorted(_expected(graph, expr) & set(users))
            assert [user async for user in bounded.audience(expr, page_size=3)] == expected, expr


async def test_every_list_named_is_checked_for_the_viewer(
    driver: Driver, as_viewer: AsViewer, graph: nx.DiGraph, uid: UserIds
) -> None:
    users = sorted(graph.nodes)
    await driver.set_privacy(users[2], following_visibility="private")
    expr = {"and": [{"followers": users[0]}, {"not": {"following": users[2]}}]}
    async with as_viewer(uid("stranger")) as reader:
        await refused(reader.count_audience(expr), 403, "network_hidden")
        await refused(anext(aiter(reader.audience(expr))), 403, "network_hidden")
    async with as_viewer(users[2]) as reader:  # its own list
        assert (await reader.count_audience(expr)).total >= 0


@pytest.mark.parametrize(
    ("expr", "code", "says"),
    [
        ({"not": {"followers": "a"}}, "invalid_audience", "negate"),
        ({"xor": []}, "invalid_audience", "unknown key"),
        ({"followers": "bad id"}, "invalid_user_id", "expr.followers"),
    ],
)
async def test_a_bad_expression_is_named(
    driver: Driver, expr: dict[str, Any], code: str, says: str
) -> None:
    error = await refused(driver.count_audience(expr), 422, code)
    assert says in str(error)
