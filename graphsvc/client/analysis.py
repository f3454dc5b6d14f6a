"""Helpers for data scientists, on the blocking client (``Analysis``, a base of
``GraphClient``): many users' counts or relationships in as few calls as the server's limits
allow, and neighbourhoods as networkx graphs (networkx imported on first use, an optional
extra). ``AsyncAnalysis`` is the asynchronous client's base: notebooks block, so it has none
yet, and the blocking client is generated from the asynchronous one with this name mapped."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from graphsvc.client.errors import Forbidden
from graphsvc.wire.schemas import CountsBody, Item, RelationshipBody, RelationshipsBody

if TYPE_CHECKING:
    import networkx


class Reads(Protocol):
    """What these helpers use of ``graphsvc.client.GraphClient``."""

    def counts(self, user_id: str) -> CountsBody: ...
    def relationships(self, user_id: str, ids: Iterable[str]) -> RelationshipsBody: ...
    def followers(self, user_id: str, *, limit: int | None = None) -> Iterable[Item]: ...
    def following(self, user_id: str, *, limit: int | None = None) -> Iterable[Item]: ...


RELATIONSHIPS_PER_CALL = 100  # the server's default RELATIONSHIPS_MAX_IDS


def counts_many(graph: Reads, user_ids: Iterable[str]) -> dict[str, CountsBody]:
    """Every user's counts (one call each: counts are O(1) on the server)."""
    return {user: graph.counts(user) for user in dict.fromkeys(user_ids)}


def relationships_many(
    graph: Reads, viewer: str, user_ids: Sequence[str], per_call: int = RELATIONSHIPS_PER_CALL
) -> dict[str, RelationshipBody]:
    """How the viewer relates to each id, in calls of at most ``per_call`` ids."""
    ids = list(dict.fromkeys(user_ids))
    found: dict[str, RelationshipBody] = {}
    for start in range(0, len(ids), per_call):
        found.update(graph.relationships(viewer, ids[start : start + per_call]).relationships)
    return found


def ego_graph(
    graph: Reads, user: str, *, radius: int = 1, max_nodes: int = 500
) -> networkx.DiGraph:
    """The user's neighbourhood as a ``networkx.DiGraph``: followers and followings out to
    ``radius`` (1 or 2) hops, at most ``max_nodes`` nodes (nearest first), and every follow
    among them, as ``networkx.ego_graph(G, user, radius, undirected=True)`` has: the edges
    the walked lists gave carry their ``since``, the others (found by batched relationships,
    at most ``max_nodes`` squared over 200 calls) have none.

    It is what the client's viewer may see: a list its owner hides from the viewer is not
    walked, and is named in the graph's ``hidden_lists`` attribute as (user, side); a node
    whose relationships the viewer may not ask (only its owner and service keys naming no
    viewer may) is named in ``unasked``, and the follows from it that no walked list gave
    are absent."""
    import networkx

    if radius not in (1, 2):
        raise ValueError("radius is 1 or 2")
    ego = networkx.DiGraph(hidden_lists=[], unasked=[])
    ego.add_node(user)
    _walk_out(graph, ego, user, radius, max_nodes)
    _close(graph, ego)
    return ego


def _walk_out(graph: Reads, ego: networkx.DiGraph, user: str, radius: int, max_nodes: int) -> None:
    """The nodes out to ``radius`` hops, nearest first, with the edges their lists give."""
    frontier = [user]
    for _ in range(radius):
        next_frontier: list[str] = []
        for node in frontier:
            room = max_nodes - ego.number_of_nodes()
            if room <= 0:
                return
            for item in _visible(ego, node, "followers", graph.followers(node, limit=room)):
                _add(ego, item.user_id, node, item.since, next_frontier, max_nodes)
            room = max_nodes - ego.number_of_nodes()
            if room > 0:
                following = graph.following(node, limit=room)
                for item in _visible(ego, node, "following", following):
                    _add(ego, node, item.user_id, item.since, next_frontier, max_nodes)
        frontier = next_frontier


def _close(graph: Reads, ego: networkx.DiGraph) -> None:
    """The follows among the nodes that no walked list gave: each pair asked once, from its
    first node, in batches; a node whose relationships the viewer may not read is noted."""
    nodes = sorted(ego.nodes)
    for i, node in enumerate(nodes):
        later = nodes[i + 1 :]
        if not later:
            break
        try:
            found = relationships_many(graph, node, later)
        except Forbidden:  # another user's relationships (owner_only): not the viewer's to ask
            ego.graph["unasked"].append(node)
            continue
        for other, rel in found.items():
            if rel.following and not ego.has_edge(node, other):
                ego.add_edge(node, other)
            if rel.followed_by and not ego.has_edge(other, node):
                ego.add_edge(other, node)


def _visible(ego: networkx.DiGraph, node: str, side: str, items: Iterable[Item]) -> Iterator[Item]:
    """A list's items, or none when its owner hides it from the viewer (noted on the graph)."""
    try:
        yield from items
    except Forbidden as refused:
        if refused.code != "network_hidden":
            raise
        ego.graph["hidden_lists"].append((node, side))


def _add(
    ego: networkx.DiGraph, src: str, dst: str, since: datetime, frontier: list[str], max_nodes: int
) -> None:
    for node in (src, dst):
        if node not in ego:
            if ego.number_of_nodes() >= max_nodes:
                return
            ego.add_node(node)
            frontier.append(node)
    ego.add_edge(src, dst, since=since)


def subgraph(graph: Reads, users: Sequence[str]) -> networkx.DiGraph:
    """The follows among ``users`` as a ``networkx.DiGraph`` (asked per user, in batches of
    relationships), without ``since``: who follows whom, and nothing else."""
    import networkx

    nodes = list(dict.fromkeys(users))
    sub = networkx.DiGraph()
    sub.add_nodes_from(nodes)
    for user in nodes:
        for other, rel in relationships_many(graph, user, [n for n in nodes if n != user]).items():
            if rel.following:
                sub.add_edge(user, other)
    return sub


class AsyncAnalysis:
    """The asynchronous client's helpers for data scientists: none (see the module)."""


class Analysis:
    """The blocking client's helpers for data scientists (the functions above, as methods)."""

    def counts_many(self: Reads, user_ids: Iterable[str]) -> dict[str, CountsBody]:
        return counts_many(self, user_ids)

    def relationships_many(
        self: Reads, viewer: str, user_ids: Iterable[str]
    ) -> dict[str, RelationshipBody]:
        return relationships_many(self, viewer, list(user_ids))

    def ego_graph(
        self: Reads, user: str, *, radius: int = 1, max_nodes: int = 500
    ) -> networkx.DiGraph:
        return ego_graph(self, user, radius=radius, max_nodes=max_nodes)

    def subgraph(self: Reads, users: Iterable[str]) -> networkx.DiGraph:
        return subgraph(self, list(users))
