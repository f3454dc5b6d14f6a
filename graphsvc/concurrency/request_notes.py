"""What a request read from Neo4j, noted as it happens, for its headers and its charge.

A read the mirror usually answers can be answered from Neo4j instead, for two reasons: Redis
could not be reached (a *fallback*, noted by the breaker; the response then says
``X-Graph-Source: neo4j``), or the mirror does not hold the answer (a *graph read*, noted by
the list services: a page past the hot list, a list filtered by the other direction). Either
costs the graph more, so the API charges the caller's budget the route's ``graph_cost`` for
it (``api/http/access.py``). The API's middleware opens one ``RequestNotes`` around every request
(``noting``); the code that reads notes into it wherever it runs within that request, through
a context variable, so no signature between the route and the store carries it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(slots=True)
class RequestNotes:
    fallbacks: list[str] = field(default_factory=list)  # reads served from Neo4j for want of Redis
    graph_reads: list[str] = field(default_factory=list)  # reads the mirror cannot answer

    @property
    def read_the_graph(self) -> bool:
        return bool(self.fallbacks or self.graph_reads)


_notes: ContextVar[RequestNotes | None] = ContextVar("graphsvc_request_notes", default=None)


@contextmanager
def noting() -> Iterator[RequestNotes]:
    """Collect the notes of one request (outside any, notes are dropped)."""
    notes = RequestNotes()
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def note_fallback(what: str) -> None:
    notes = _notes.get()
    if notes is not None:
        notes.fallbacks.append(what)


def note_graph_read(what: str) -> None:
    notes = _notes.get()
    if notes is not None:
        notes.graph_reads.append(what)
