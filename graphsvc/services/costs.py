"""What a request read from Neo4j where the mirror usually answers, noted for its charge.

A followers or following page is a Redis read; a page past the hot list, or one filtered by
the other direction (``not_followed_back``), is a Neo4j read too, which costs the graph more.
The services note such reads here (``note_graph_read``), within the request's tracking
(``tracking_graph_reads``, opened around every request by the API's middleware), and the API
charges the caller's budget the route's ``graph_cost`` for them (``api/access.py``). Reads
answered from Neo4j because Redis could not be reached are noted by ``fallback`` and count
the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_graph_reads: ContextVar[list[str] | None] = ContextVar("graphsvc_graph_reads", default=None)


@contextmanager
def tracking_graph_reads() -> Iterator[list[str]]:
    """Collect, for one request, what it read from Neo4j beyond the mirror."""
    noted: list[str] = []
    token = _graph_reads.set(noted)
    try:
        yield noted
    finally:
        _graph_reads.reset(token)


def note_graph_read(what: str) -> None:
    noted = _graph_reads.get()
    if noted is not None:
        noted.append(what)
