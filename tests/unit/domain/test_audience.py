"""Audience expressions: their grammar, its bounds, and the union of conjunctions each means."""

from __future__ import annotations

import pytest

from graphsvc.domain.audience import Conjunction, InvalidAudience, Operand, parse
from graphsvc.domain.model import Side

A, B, C = (Operand(u, Side.FOLLOWERS) for u in "abc")
GB = Operand("b", Side.FOLLOWING)


def _parse(expr: object) -> list[Conjunction]:
    return parse(expr, max_operands=8, max_conjunctions=8)


def test_and_with_not_is_one_conjunction() -> None:
    expr = {"and": [{"followers": "a"}, {"followers": "b"}, {"not": {"followers": "c"}}]}
    assert _parse(expr) == [Conjunction((A, B), (C,))]


def test_not_is_pushed_down_and_or_distributes() -> None:
    expr = {"and": [{"followers": "a"}, {"not": {"or": [{"followers": "b"}, {"following": "b"}]}}]}
    assert _parse(expr) == [Conjunction((A,), (B, GB))]
    expr = {"and": [{"or": [{"followers": "a"}, {"followers": "b"}]}, {"not": {"followers": "c"}}]}
    assert _parse(expr) == [Conjunction((A,), (C,)), Conjunction((B,), (C,))]
    expr = {"not": {"and": [{"not": {"followers": "a"}}, {"followers": "b"}]}}
    with pytest.raises(InvalidAudience, match="does not negate"):
        _parse(expr)  # "a or not b": not b alone is most of the graph


def test_a_list_and_its_complement_is_nobody() -> None:
    assert _parse({"and": [{"followers": "a"}, {"not": {"followers": "a"}}]}) == []


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ({"not": {"followers": "a"}}, "does not negate"),
        ({"followers": "a", "following": "b"}, "one key"),
        ({"followers": 3}, "a user id"),
        ({"followers": "a b"}, "not a valid user id"),
        ({"and": []}, "non-empty list"),
        ({"xor": [{"followers": "a"}]}, "unknown key 'xor'"),
        ({"or": [{"followers": str(n)} for n in range(9)]}, "AUDIENCE_OPERANDS_MAX"),
        (
            {"and": [{"or": [{"followers": f"{n}{m}"} for m in range(2)]} for n in range(4)]},
            "AUDIENCE_CONJUNCTIONS_MAX",
        ),
    ],
)
def test_bad_expressions_are_named(expr: object, says: str) -> None:
    with pytest.raises(Exception, match=says):
        _parse(expr)
