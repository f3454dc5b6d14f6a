"""The one layer every request passes before its route, doing in order what each request needs:

1. its ``X-Request-ID``, and once it is answered its count and latency by route template and,
   with LOG_JSON, its log line (``observability.py``);
2. the headers noted while it was answered: the budget, a fallback to Neo4j
   (``noted_headers.py``);
3. for a ``/v1`` request, its key, refused 401 before anything reads the request
   (``access.key_first``);
4. the bound on its body, 413 past it (``body_limit.py``);
5. a lean route, served at once (``lean.py``); any other request goes on to the framework's
   exception middleware and router;
6. around all of it, the request's deadline (``deadline.py``): unanswered by then, a 503.

One layer rather than a stack of five middleware: each layer of a stack is one more call, one
more wrapped ``send`` and one more copy of the response's start per request, a share of a read
the mirror answers from memory that a reader pays and gets nothing for (docs/performance.md,
"Where a request's CPU goes").
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc.api.http.access import key_first
from graphsvc.api.http.body_limit import BodyBound
from graphsvc.api.http.deadline import Deadline
from graphsvc.api.http.lean import LeanRoute, LeanRoutes
from graphsvc.api.http.noted_headers import noted
from graphsvc.api.http.observability import observe, request_id_of
from graphsvc.concurrency.request_notes import noting


class Front:
    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: Sequence[LeanRoute],
        max_bytes: int,
        imports_max_bytes: int,
        deadline_seconds: float,
        log_requests: bool = False,
    ) -> None:
        """``app``: what serves the requests no lean route matches (the framework's own)."""
        self.app = app
        self._lean = LeanRoutes(routes)
        self._bound = BodyBound(max_bytes, imports_max_bytes)
        self._deadline_seconds = deadline_seconds
        self._log = log_requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_of(scope)
        status = 500
        with noting() as notes:
            deadline = Deadline(self._deadline_seconds)

            async def respond(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    deadline.answered()
                    status = message["status"]
                    message = await noted(scope, notes, message, request_id)
                await send(message)

            try:
                async with deadline.bound(receive) as bounded:
                    await self._serve(scope, bounded, respond)
                if deadline.missed:
                    await deadline.refusal(scope, receive, respond)
            finally:
                observe(scope, status, time.perf_counter() - started, request_id, self._log)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith("/v1/"):
            refusal = await key_first(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        bounded = await self._bound.admit(scope, receive, send)
        if bounded is None:
            return
        route = self._lean.match(scope)
        if route is None:
            await self.app(scope, bounded, send)
        else:
            await self._lean.serve(route, scope, bounded, send)
