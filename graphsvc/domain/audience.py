"""Audiences: set algebra over users' lists, as FlockDB answered it ("followers of A who also
follow B but not C"), read as a union of conjunctions.

An expression is JSON: ``{"followers": "ana"}`` or ``{"following": "bo"}`` (an operand: one
user's list), or ``{"and": [...]}``, ``{"or": [...]}``, ``{"not": {...}}``. It is rewritten as
a union of conjunctions (disjunctive normal form, ``not`` pushed down to the operands), and
each conjunction needs at least one operand it does not negate: a complement alone ("everyone
who does not follow C") is most of the graph, which no request may walk. Each conjunction is
then answered by walking its smallest list and testing each entry against the others, so the
work is bounded by that list, and the bounds are declared: operands, conjunctions, entries
examined.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphsvc.domain.errors import GraphError
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Side

MAX_DEPTH = 6


class InvalidAudience(GraphError):
    status = 422
    code = "invalid_audience"


@dataclass(frozen=True, slots=True)
class Operand:
    owner: str
    side: Side

    @property
    def key(self) -> tuple[str, str]:
        return (self.owner, self.side.label)


@dataclass(frozen=True, slots=True)
class Conjunction:
    """Users in every list of ``lists`` and in none of ``without``."""

    lists: tuple[Operand, ...]
    without: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class AudienceScan:
    """What one read of a conjunction found: how many entries of its driving list it read,
    the last one's id (None: none), and those that passed every test, in id order."""

    examined: int
    last: str | None
    matched: list[str]


# an expression as a tree: ("list", Operand, negated) leaves under ("and" | "or", [children])
Tree = tuple[Any, ...]


def parse(expr: Any, *, max_operands: int, max_conjunctions: int) -> list[Conjunction]:
    """The union of conjunctions an expression means; InvalidAudience (422) naming the part of
    it that breaks the grammar or a bound."""
    operands: list[Operand] = []
    tree = _tree(expr, "expr", 0, operands)
    if len(operands) > max_operands:
        raise InvalidAudience(
            f"expr names {len(operands)} lists; at most {max_operands} (AUDIENCE_OPERANDS_MAX)"
        )
    terms = _dnf(tree, False, max_conjunctions)
    conjunctions = []
    for positive, negative in terms:
        if not positive:
            raise InvalidAudience(
                "every alternative of expr needs a list it does not negate: a complement "
                "alone is most of the graph"
            )
        lists = tuple(sorted(set(positive), key=_by_key))
        without = tuple(sorted(set(negative), key=_by_key))
        if not set(lists) & set(without):  # a list and its complement: nobody
            conjunctions.append(Conjunction(lists, without))
    return list(dict.fromkeys(conjunctions))


def _by_key(operand: Operand) -> tuple[str, str]:
    return operand.key


def _tree(expr: Any, where: str, depth: int, operands: list[Operand]) -> Tree:
    if depth > MAX_DEPTH:
        raise InvalidAudience(f"{where}: nested deeper than {MAX_DEPTH}")
    if not isinstance(expr, Mapping) or len(expr) != 1:
        raise InvalidAudience(
            f"{where}: an object with one key, followers, following, and, or or not"
        )
    ((key, value),) = expr.items()
    if key in ("followers", "following"):
        if not isinstance(value, str):
            raise InvalidAudience(f"{where}.{key}: a user id")
        validate_user_id(value, f"{where}.{key}")
        operand = Operand(value, Side.FOLLOWERS if key == "followers" else Side.FOLLOWING)
        operands.append(operand)
        return ("list", operand)
    if key == "not":
        return ("not", _tree(value, f"{where}.not", depth + 1, operands))
    if key in ("and", "or"):
        if not isinstance(value, list) or not value:
            raise InvalidAudience(f"{where}.{key}: a non-empty list of expressions")
        children = [
            _tree(item, f"{where}.{key}[{n}]", depth + 1, operands) for n, item in enumerate(value)
        ]
        return (key, children)
    raise InvalidAudience(f"{where}: unknown key {key!r}; use followers, following, and, or, not")


Term = tuple[list[Operand], list[Operand]]  # (lists, negated lists)


def _dnf(tree: Tree, negated: bool, most: int) -> list[Term]:
    kind = tree[0]
    if kind == "list":
        return [([], [tree[1]])] if negated else [([tree[1]], [])]
    if kind == "not":
        return _dnf(tree[1], not negated, most)
    # De Morgan: a negated "and" is an "or" of negations, and the other way round
    union = (kind == "or") != negated
    parts = [_dnf(child, negated, most) for child in tree[1]]
    if union:
        terms = [term for part in parts for term in part]
    else:
        terms = [([], [])]
        for part in parts:
            terms = [(a + c, b + d) for a, b in terms for c, d in part]
            if len(terms) > most:
                break
    if len(terms) > most:
        raise InvalidAudience(
            f"expr expands to more than {most} alternatives (AUDIENCE_CONJUNCTIONS_MAX): "
            "write it with fewer or-branches under and"
        )
    return terms
