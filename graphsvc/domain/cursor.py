"""Opaque, tamper-evident keyset cursors: one format for every paged list.

A cursor names the last item a client saw, as ``(since, key)``, plus the list it belongs to,
and nothing else. The key is a user id on the graph's lists and a post's member
(``author|post_id``) on a timeline. A list ordered by a private score (friends, by affinity)
finds the score of the cursor's item again on the next page, so no score ever leaves the
service. Keyset positions (not offsets) are what make a walk yield every edge exactly once
while new follows arrive: new edges are always newer than any position already handed out.

The payload ``4|scope|since|key``, in URL-safe base64, is followed by its keyed BLAKE2b
(128 bits, its key derived from CURSOR_SECRET for cursors alone), so a cursor cannot be
edited, and its scope (the list and its user) is checked, so it cannot be replayed against
another list. BLAKE2b's keyed mode is a MAC by design, and one call of it in C, where an
HMAC-SHA256 through a signing library took several: a cursor is made or read by every page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass

from graphsvc.domain.errors import InvalidCursor
from graphsvc.wire.ids import is_user_id, quoted

_VERSION = "4"  # "4|scope|since|key"
_PERSON = b"graphsvc.cursor"  # the key derived for cursors is worth nothing to any other use


@dataclass(frozen=True, slots=True)
class Position:
    """Where a walk stopped: strictly later entries come next."""

    since: int
    user_id: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


_MAC_BYTES = 16
_MAC_CHARS = 22  # 16 bytes in unpadded URL-safe base64
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _is_b64(text: str) -> bool:
    return len(text) % 4 != 1 and _B64_CHARS.issuperset(text)


def _unb64(text: str) -> bytes:
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded, altchars=b"-_", validate=True)


class CursorCodec:
    def __init__(self, secret: str) -> None:
        self._key = hashlib.blake2b(secret.encode(), digest_size=32, person=_PERSON).digest()

    def _mac(self, body: str) -> str:
        return _b64(hashlib.blake2b(body.encode(), key=self._key, digest_size=_MAC_BYTES).digest())

    def seal(self, payload: str) -> str:
        """The payload, encoded and followed by its MAC: a cursor for whatever it says."""
        body = _b64(payload.encode())
        return f"{body}.{self._mac(body)}"

    def encode(self, scope: str, position: Position) -> str:
        return self.encode_at(scope, position.since, position.user_id)

    def decode(self, scope: str, cursor: str) -> Position:
        """Return the position, or raise InvalidCursor saying what is wrong with it."""
        return Position(*self.decode_at(scope, cursor, is_user_id))

    def encode_at(self, scope: str, since: int, key: str) -> str:
        """A cursor for the position ``(since, key)`` of the list ``scope``."""
        return self.seal(f"{_VERSION}|{scope}|{since}|{key}")

    def decode_at(
        self, scope: str, cursor: str, key_is_valid: Callable[[str], bool]
    ) -> tuple[int, str]:
        """The ``(since, key)`` of a cursor of ``scope``, or InvalidCursor saying what is wrong."""
        version, _, rest = self._payload(cursor).partition("|")
        if version != _VERSION:
            raise InvalidCursor(f"cursor version {quoted(version)} is not supported")
        if not rest.startswith(f"{scope}|"):
            raise InvalidCursor("cursor belongs to a different list; start again without cursor")
        since, _, key = rest[len(scope) + 1 :].partition("|")
        if not is_micros(since) or not key_is_valid(key):
            raise InvalidCursor("cursor is malformed: bad position")
        return int(since), key

    def _payload(self, cursor: str) -> str:
        """The signed payload, or InvalidCursor saying what is wrong with the cursor."""
        body, dot, mac = cursor.partition(".")
        if not dot or not body or not mac:
            raise InvalidCursor("cursor is malformed: expected the opaque value from next_cursor")
        if not _is_b64(body) or not _is_b64(mac):
            raise InvalidCursor("cursor is malformed: not URL-safe base64")
        if len(mac) != _MAC_CHARS:
            raise InvalidCursor("cursor is malformed: its signature is cut or extended")
        if not hmac.compare_digest(mac, self._mac(body)):
            raise InvalidCursor("cursor signature does not match: it was altered or not issued")
        try:
            return _unb64(body).decode(errors="replace")
        except (binascii.Error, ValueError):
            raise InvalidCursor("cursor is malformed: not URL-safe base64") from None


MICROS_MAX = 2**63 - 1  # a position's time: what Neo4j and Redis take as an integer


def is_micros(text: str) -> bool:
    """Digits of a time both stores can take (a bigger number fails there, not here)."""
    return text.isascii() and text.isdigit() and len(text) <= 19 and int(text) <= MICROS_MAX
