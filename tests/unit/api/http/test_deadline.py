"""A request's deadline, on the front layer alone: unanswered by then, a 503 naming it; a
started response, or a body still arriving, is never cut; a timeout of the handling's own is
not the deadline's."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import pytest
from starlette.types import Message, Receive, Scope, Send

from graphsvc.api.http.front import Front

DEADLINE = 0.3

Handling = Callable[[Receive, Send], Awaitable[None]]


async def served(handling: Handling, pieces: list[tuple[float, bytes]] | None = None):
    """(status, body, seconds taken) of one request through the front layer; ``pieces``: the
    body's pieces, each after its pause."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await handling(receive, send)

    chunks = list(pieces or [(0.0, b"")])

    async def receive() -> Message:
        if not chunks:
            await asyncio.sleep(3600)  # a client that stays connected
        pause, body = chunks.pop(0)
        await asyncio.sleep(pause)
        return {"type": "http.request", "body": body, "more_body": bool(chunks)}

    answered: asyncio.Queue[Message] = asyncio.Queue()
    scope = {"type": "http", "method": "PUT", "path": "/elsewhere", "headers": []}
    front = Front(
        app, routes=[], max_bytes=10_000, imports_max_bytes=10_000, deadline_seconds=DEADLINE
    )
    began = time.monotonic()
    await front(scope, receive, answered.put)
    sent = [answered.get_nowait() for _ in range(answered.qsize())]
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body, time.monotonic() - began


async def answer(send: Send, status: int = 200, body: bytes = b"{}") -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def test_a_request_unanswered_by_its_deadline_is_a_503_naming_it() -> None:
    async def stuck(receive: Receive, send: Send) -> None:
        await asyncio.sleep(30)  # a write waiting on a store that died
        await answer(send)

    status, body, took = await served(stuck)
    assert status == 503
    error = json.loads(body)["error"]
    assert error["code"] == "store_unavailable"
    assert f"deadline of {DEADLINE:g} s" in error["message"]
    assert DEADLINE <= took < DEADLINE + 1.0


async def test_a_request_answered_in_time_is_untouched() -> None:
    async def quick(receive: Receive, send: Send) -> None:
        await asyncio.sleep(DEADLINE / 3)
        await answer(send, 201, b'{"ok":true}')

    assert (await served(quick))[:2] == (201, b'{"ok":true}')


async def test_a_started_response_is_never_cut() -> None:
    async def stream(receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(3):
            await asyncio.sleep(DEADLINE / 1.5)
            await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await send({"type": "http.response.body", "body": b"!"})

    status, body, took = await served(stream)
    assert (status, body) == (200, b"xxx!")
    assert took > DEADLINE * 1.5


async def test_the_time_counts_from_the_last_piece_of_the_body() -> None:
    async def upload(receive: Receive, send: Send) -> None:
        got = b""
        while True:
            message = await receive()
            got += message["body"]
            if not message["more_body"]:
                break
        await answer(send, 200, got)

    pieces = [(DEADLINE / 1.5, b"a"), (DEADLINE / 1.5, b"b"), (DEADLINE / 1.5, b"c")]
    status, body, took = await served(upload, pieces)
    assert (status, body) == (200, b"abc")
    assert took > DEADLINE * 1.5


async def test_a_timeout_of_the_handling_own_is_not_the_deadline() -> None:
    async def own_timeout(receive: Receive, send: Send) -> None:
        raise TimeoutError("the handling's own")

    with pytest.raises(TimeoutError, match="the handling's own"):
        await served(own_timeout)
