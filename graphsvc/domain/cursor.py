"""Opaque, tamper-evident keyset cursors.

A cursor names the last item a client saw, as ``(since, user_id)``, plus the list it belongs
to, and nothing else: a list ordered by a private score (friends, by affinity) finds the
score of the cursor's item again on the next page, so no score ever leaves the service. Keyset positions (not offsets) are what make a walk yield every edge exactly once while
new follows arrive: new edges are always newer than any position already handed out.
The HMAC binds the position to one list of one user, so a cursor cannot be edited or replayed
against another list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from graphsvc.domain.errors import InvalidCursor, quoted
from graphsvc.domain.ids import is_user_id

_VERSION = "3"  # "3|scope|since|user_id"
_MAC_BYTES = 12


@dataclass(frozen=True, slots=True)
class Position:
    """Where a walk stopped: strictly later entries come next."""

    since: int
    user_id: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded, altchars=b"-_", validate=True)


class CursorCodec:
    def __init__(self, secret: str) -> None:
        self._key = secret.encode()

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(self, scope: str, position: Position) -> str:
        payload = f"{_VERSION}|{scope}|{position.since}|{position.user_id}".encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def sign(self, scope: str, text: str) -> str:
        """A cursor carrying free ``text`` (a position no ``Position`` can hold), for ``scope``."""
        payload = f"t|{scope}|{text}".encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def verify(self, scope: str, cursor: str) -> str:
        """The text of a cursor made by ``sign`` for ``scope``, or InvalidCursor."""
        kind, _, rest = self._payload(cursor).partition("|")
        if kind != "t" or not rest.startswith(f"{scope}|"):
            raise InvalidCursor("cursor belongs to a different list; start again without cursor")
        return rest[len(scope) + 1 :]

    def _payload(self, cursor: str) -> str:
        """The signed payload, or InvalidCursor saying what is wrong with the cursor."""
        body, dot, mac = cursor.partition(".")
        if not dot or not body or not mac:
            raise InvalidCursor("cursor is malformed: expected the opaque value from next_cursor")
        try:
            payload, given = _unb64(body), _unb64(mac)
        except (binascii.Error, ValueError):
            raise InvalidCursor("cursor is malformed: not URL-safe base64") from None
        if not hmac.compare_digest(given, self._mac(payload)):
            raise InvalidCursor("cursor signature does not match: it was altered or not issued")
        return payload.decode(errors="replace")

    def decode(self, scope: str, cursor: str) -> Position:
        """Return the position, or raise InvalidCursor saying what is wrong with it."""
        version, _, rest = self._payload(cursor).partition("|")
        if version != _VERSION:
            raise InvalidCursor(f"cursor version {quoted(version)} is not supported")
        cursor_scope, _, position = rest.rpartition("|")
        cursor_scope, _, since = cursor_scope.rpartition("|")
        if cursor_scope != scope:
            raise InvalidCursor("cursor belongs to a different list; start again without cursor")
        if not is_micros(since) or not is_user_id(position):
            raise InvalidCursor("cursor is malformed: bad position")
        return Position(int(since), position)


MICROS_MAX = 2**63 - 1  # a position's time: what Neo4j and Redis take as an integer


def is_micros(text: str) -> bool:
    """Digits of a time both stores can take (a bigger number fails there, not here)."""
    return text.isascii() and text.isdigit() and len(text) <= 19 and int(text) <= MICROS_MAX
