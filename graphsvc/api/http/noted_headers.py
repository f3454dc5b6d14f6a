"""Headers a response gets from what happened while it was answered, whatever the route
returned:

- ``X-Graph-Source: neo4j`` when Neo4j answered because Redis could not be reached, so a
  client can tell a slower fallback answer from a mirror one;
- the caller's budget (``RateLimit-*``), which ``access.admit`` notes in the request's state,
  after the surcharge of a request that read Neo4j where the mirror usually answers (a page
  past the hot list, a fallback read): the rest of its route's ``graph_cost``, charged here,
  as the answer is sent.

The front layer (``front.py``) runs the route inside the notes' context, so its fallback and
graph-read notes reach the response's start.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Message, Scope

from graphsvc.api.http.access import BUDGET_HEADERS, GRAPH_SURCHARGE
from graphsvc.concurrency.request_notes import RequestNotes


async def noted(scope: Scope, notes: RequestNotes, message: Message, request_id: str) -> Message:
    """A response's start, with the request id and the headers noted while it was answered
    (after charging what it owes for reading Neo4j)."""
    headers = list(message.get("headers", ()))
    headers.append((b"x-request-id", request_id.encode()))
    state = scope.get("state")
    if state is not None:
        if notes.read_the_graph and GRAPH_SURCHARGE in state:
            await _surcharge(scope, state)
        budget = state.get(BUDGET_HEADERS)
        if budget:
            headers += [(k.lower().encode(), v.encode()) for k, v in budget]
    if notes.fallbacks:
        headers.append((b"x-graph-source", b"neo4j"))
    return {**message, "headers": headers}


async def _surcharge(scope: Scope, state: dict[str, Any]) -> None:
    """Charge what the request owes for reading Neo4j; its budget headers then say so."""
    key_id, write, extra = state.pop(GRAPH_SURCHARGE)
    rate_limits = scope["app"].state.services.rate_limits
    budget = await rate_limits.spend(key_id, write=write, cost=extra)
    if budget is not None:
        state[BUDGET_HEADERS] = budget.headers()
