"""A value that is valid but for a final newline is refused wherever it is checked (ids in
the paths of the app over the real servers: tests/api/test_trailing_newlines.py).

Python's ``$`` also matches before a final "\\n", so the service's own checks match whole
values (``fullmatch``); pydantic's ``pattern=`` runs on Rust's regex engine, where ``$`` is the
end of the text, and these tests hold it to that too."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError
from starlette.types import Message, Receive, Scope, Send

from graphsvc.api.http.front import Front
from graphsvc.domain.access import key_id_of, new_token
from graphsvc.settings import Settings
from graphsvc.wire.ids import is_user_id


def test_a_key_with_a_final_newline_is_no_key() -> None:
    key_id, token = new_token()
    assert key_id_of(token) == key_id
    assert key_id_of(token + "\n") is None


def test_a_user_id_with_a_final_newline_is_no_user_id() -> None:
    assert is_user_id("valid-id")
    assert not is_user_id("valid-id\n")


async def _request_id_answered(given: bytes) -> bytes:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/livez",
        "headers": [(b"x-request-id", given)],
    }
    front = Front(app, routes=[], max_bytes=1_000, imports_max_bytes=1_000, deadline_seconds=5)
    await front(scope, receive, send)
    return dict(sent[0]["headers"])[b"x-request-id"]


async def test_a_request_id_with_a_final_newline_is_replaced() -> None:
    assert await _request_id_answered(b"abc-123") == b"abc-123"
    assert re.fullmatch(rb"[0-9a-f]{32}", await _request_id_answered(b"abc-123\n"))


def test_a_redis_prefix_with_a_final_newline_is_refused() -> None:
    assert Settings(redis_prefix="gs2:").redis.redis_prefix == "gs2:"
    with pytest.raises(ValidationError):
        Settings(redis_prefix="gs2:\n")
