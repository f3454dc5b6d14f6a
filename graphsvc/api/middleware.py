"""``X-Graph-Source: neo4j`` on responses that Neo4j answered because Redis could not be
reached: a client can tell a slower fallback answer from a mirror one.

Pure ASGI, so the route runs inside this context and its fallback notes reach us.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.services.fallback import tracking_fallbacks


class GraphSourceHeader:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with tracking_fallbacks() as noted:

            async def send_noted(message: Message) -> None:
                if message["type"] == "http.response.start" and noted:
                    headers = [*message.get("headers", []), (b"x-graph-source", b"neo4j")]
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_noted)
