"""A request's deadline: answered within NEO4J_TX_TIMEOUT_SECONDS plus
REQUEST_DEADLINE_MARGIN_SECONDS of its body's last byte, or a 503 ``store_unavailable``.

Why: every statement the API runs is cut off by Neo4j after its transaction timeout, but a
request can wait on more than a statement. A write whose connection dies with the server
(a SIGKILL, a lost host) waits while the driver reconnects and runs its transaction again,
and the writes of its batch wait with it: a caller could not tell such a write from a slow
one, and its threads piled up behind it. With a deadline, the request is cancelled where it
waits and answered 503 with ``Retry-After``; whatever it had started goes on or stops as a
crash of the request would leave it. A write already in a committing batch stays in it
(``concurrency/group_commit.py``): it is committed and mirrored, or not, as the next read
and the change feed tell, and the outbox brings every committed change to the mirror.

The time counts from the body's last byte (each piece of the body received starts it
again), so a large upload is not cut for the time it takes to arrive; a response that has
started (a stream, an export) is never cut.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.types import Message, Receive, Scope, Send

from graphsvc.api.http.errors import error_response

RETRY_AFTER_SECONDS = 1


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.missed = False
        self._started = False
        self._timeout: asyncio.Timeout | None = None

    def answered(self) -> None:
        """The response has started: nothing cuts it from now on."""
        self._started = True
        if self._timeout is not None:
            self._timeout.reschedule(None)

    @asynccontextmanager
    async def bound(self, receive: Receive) -> AsyncIterator[Receive]:
        """Run the request's handling within the deadline; ``receive`` as the handling must
        call it (each piece of the body starts the time again). Past the deadline, with no
        response started, the handling is cancelled and ``missed`` set."""
        loop = asyncio.get_running_loop()

        async def received() -> Message:
            message = await receive()
            if not self._started and self._timeout is not None:
                self._timeout.reschedule(loop.time() + self.seconds)
            return message

        timeout = asyncio.timeout(self.seconds)
        try:
            async with timeout:
                self._timeout = timeout
                yield received
        except TimeoutError:
            if not timeout.expired() or self._started:
                raise  # a timeout of the handling's own, not the deadline
            self.missed = True
        finally:
            self._timeout = None

    async def refusal(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The 503 of a request its deadline cut off."""
        message = (
            f"the request was not answered within its deadline of {self.seconds:g} s (a store "
            "is slow or cannot be reached): a write may or may not have been applied; read it "
            "back before sending it again"
        )
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        await error_response(503, "store_unavailable", message, headers)(scope, receive, send)
