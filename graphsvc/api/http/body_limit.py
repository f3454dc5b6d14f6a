"""A bound on every request body, answered 413 before anything parses it.

A request whose ``Content-Length`` exceeds REQUEST_BODY_MAX_BYTES is refused at once, its body
unread (the HTTP server holds a body to its length); a body sent without a length (chunked) is
read here, and refused as soon as it passes the bound, so no route ever holds more than the
bound in memory or spends the event loop parsing it. Routes that take a list bound its length in their schema as well, so a body
under the byte bound with too many items fails validation on its length, before its items.
"""

from __future__ import annotations

from starlette.types import Message, Receive, Scope, Send

from graphsvc.api.http.errors import error_response


class BodyBound:
    def __init__(self, max_bytes: int, imports_max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.imports_max_bytes = imports_max_bytes

    def _bound(self, scope: Scope) -> tuple[int, str]:
        """An import's file may be larger than other bodies (IMPORT_MAX_BYTES)."""
        if scope["method"] == "POST" and "/imports/" in scope["path"]:
            return self.imports_max_bytes, "IMPORT_MAX_BYTES"
        return self.max_bytes, "REQUEST_BODY_MAX_BYTES"

    async def admit(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """What the route reads its body from; None when the body was refused (answered)."""
        most, name = self._bound(scope)
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None and (not length.isdigit() or int(length) > most):
            await _refuse(scope, receive, send, most, name)
            return None
        if length is None and _has_body(scope):
            # chunked: read here (at most the bound) and hand the route what was read
            body = await _read_at_most(receive, most)
            if body is None:
                await _refuse(scope, receive, send, most, name)
                return None
            return _replay(body, receive)
        return receive


async def _refuse(scope: Scope, receive: Receive, send: Send, most: int, name: str) -> None:
    refusal = error_response(
        413,
        "body_too_large",
        f"the request body is larger than {name} ({most} bytes)",
        {"Connection": "close"},
    )
    await refusal(scope, receive, send)


def _has_body(scope: Scope) -> bool:
    return any(k == b"transfer-encoding" for k, _ in scope["headers"])


async def _read_at_most(receive: Receive, most: int) -> bytes | None:
    """The whole body, or None as soon as it passes ``most`` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away: the app sees an empty body and then the same
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > most:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body once, then waits on the real one (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
