"""The count changes an edge change numbers, checked against counting the graph itself."""

from __future__ import annotations

import itertools

import networkx as nx

from graphsvc.domain.count_changes import EdgeFacts, edge_deltas
from graphsvc.domain.model import Counts


def counts_of(
    graph: nx.DiGraph, user: str, inactive: set[str], flagged: set[tuple[str, str]]
) -> Counts:
    """snapshots/counts' definitions, on a networkx graph."""
    followers = list(graph.predecessors(user)) if user in graph else []
    following = list(graph.successors(user)) if user in graph else []
    active = [f for f in following if f not in inactive]
    return Counts(
        followers=len(followers),
        following=len(following),
        followers_active=len(followers) - sum((f, user) in flagged for f in followers),
        following_active=len(active),
        friends=sum(graph.has_edge(f, user) for f in active),
    )


def plus(counts: Counts, delta: Counts) -> Counts:
    return Counts(*(a + b for a, b in zip(counts.values(), delta.values(), strict=True)))


def test_every_case_of_a_follow_and_an_unfollow_moves_the_counts_exactly() -> None:
    for following, src_on, dst_on, back in itertools.product((True, False), repeat=4):
        graph = nx.DiGraph([("x", "a"), ("b", "y")])
        inactive = {user for user, on in (("a", src_on), ("b", dst_on)) if not on}
        flagged = {(s, d) for s, d in graph.edges if s in inactive}
        if back:
            graph.add_edge("b", "a")
            flagged |= {("b", "a")} if not dst_on else set()
        if not following:
            graph.add_edge("a", "b")
            flagged |= {("a", "b")} if not src_on else set()
        before = {u: counts_of(graph, u, inactive, flagged) for u in ("a", "b")}
        was_flagged = ("a", "b") in flagged
        if following:
            graph.add_edge("a", "b")
            flagged |= {("a", "b")} if not src_on else set()
        else:
            graph.remove_edge("a", "b")
            flagged.discard(("a", "b"))
        facts = EdgeFacts(
            following, src_on, dst_on, back, was_flagged if not following else not src_on
        )
        src_delta, dst_delta = edge_deltas(facts)
        case = (following, src_on, dst_on, back)
        assert plus(before["a"], src_delta) == counts_of(graph, "a", inactive, flagged), case
        assert plus(before["b"], dst_delta) == counts_of(graph, "b", inactive, flagged), case
