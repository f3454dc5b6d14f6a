"""Which batches go to Neo4j as a single auto-commit statement: follows alone or unfollows
alone, in one round; any other shape needs a managed transaction of several statements."""

from __future__ import annotations

from graphsvc.adapters.neo4j.relations import one_statement
from graphsvc.domain.edge_writes import EdgeWrite, Round, WriteKind, plan_rounds

FOLLOW, UNFOLLOW, BLOCK = WriteKind.FOLLOW, WriteKind.UNFOLLOW, WriteKind.BLOCK


def batch(*writes: tuple[WriteKind, str, str]) -> list[Round]:
    """The rounds of a batch of these writes."""
    return plan_rounds([EdgeWrite(kind, src, dst) for kind, src, dst in writes])


def test_follows_alone_and_unfollows_alone_are_one_statement() -> None:
    assert one_statement(batch((FOLLOW, "a", "b"), (FOLLOW, "c", "b"), (FOLLOW, "a", "d")))
    assert one_statement(batch((UNFOLLOW, "a", "b"), (UNFOLLOW, "c", "d")))


def test_mixed_kinds_or_several_rounds_are_not() -> None:
    assert not one_statement(batch((FOLLOW, "a", "b"), (UNFOLLOW, "c", "d")))  # two kinds
    assert not one_statement(batch((FOLLOW, "a", "b"), (UNFOLLOW, "a", "b")))  # two rounds
    assert not one_statement(batch((BLOCK, "a", "b")))  # its locks come first, alone
