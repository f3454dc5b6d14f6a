"""Headers a response gets from what happened while it was answered, whatever the route
returned:

- ``X-Graph-Source: neo4j`` when Neo4j answered because Redis could not be reached, so a
  client can tell a slower fallback answer from a mirror one;
- the caller's budget (``RateLimit-*``), which ``access.admit`` notes in the request's state.

Pure ASGI, so the route runs inside this context and its fallback notes reach us.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.api.access import BUDGET_HEADERS
from graphsvc.services.fallback import tracking_fallbacks


class NotedHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with tracking_fallbacks() as noted:

            async def send_noted(message: Message) -> None:
                if message["type"] == "http.response.start":
                    budget = scope.get("state", {}).get(BUDGET_HEADERS)
                    if noted or budget:
                        headers = list(message.get("headers", []))
                        if noted:
                            headers.append((b"x-graph-source", b"neo4j"))
                        if budget:
                            headers += [(k.lower().encode(), v.encode()) for k, v in budget]
                        message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_noted)
