"""Headers a response gets from what happened while it was answered, whatever the route
returned:

- ``X-Graph-Source: neo4j`` when Neo4j answered because Redis could not be reached, so a
  client can tell a slower fallback answer from a mirror one;
- the caller's budget (``RateLimit-*``), which ``access.admit`` notes in the request's state,
  after the surcharge of a request that read Neo4j where the mirror usually answers (a page
  past the hot list, a fallback read): the rest of its route's ``graph_cost``, charged here,
  as the answer is sent.

Pure ASGI, so the route runs inside this context and its fallback and graph-read notes reach
us.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.api.http.access import BUDGET_HEADERS, GRAPH_SURCHARGE
from graphsvc.concurrency.request_notes import noting


class NotedHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with noting() as notes:

            async def send_noted(message: Message) -> None:
                if message["type"] == "http.response.start":
                    state = scope.get("state", {})
                    if notes.read_the_graph and GRAPH_SURCHARGE in state:
                        await _surcharge(scope, state)
                    budget = state.get(BUDGET_HEADERS)
                    if notes.fallbacks or budget:
                        headers = list(message.get("headers", []))
                        if notes.fallbacks:
                            headers.append((b"x-graph-source", b"neo4j"))
                        if budget:
                            headers += [(k.lower().encode(), v.encode()) for k, v in budget]
                        message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_noted)


async def _surcharge(scope: Scope, state: dict[str, Any]) -> None:
    """Charge what the request owes for reading Neo4j; its budget headers then say so."""
    key_id, write, extra = state.pop(GRAPH_SURCHARGE)
    rate_limits = scope["app"].state.services.rate_limits
    budget = await rate_limits.spend(key_id, write=write, cost=extra)
    if budget is not None:
        state[BUDGET_HEADERS] = budget.headers()
