"""Recommendation ids: what ties a follow, a show or a dismissal back to the model version
that ranked the list it came from.

Every answer of suggestions carries one (``recommendation_id``); a client sends it back with
what the user did about a suggestion of that answer. It names the version of the ranker that
computed the list (a list served from the cache carries the version it was computed with),
the user it was made for, and when it was made (ms), as ``1|version|issued|user``, in
URL-safe base64, signed with itsdangerous (HMAC-SHA256, its key derived from CURSOR_SECRET
under a salt of its own, so no cursor is a recommendation id and no id a cursor). Nobody can
forge one, nor edit the version it names; the user is checked, so one user's id cannot count
another's follows. The id is opaque but not secret: its payload is readable.

Policy: an id that is malformed, altered or another user's is refused
(``InvalidRecommendationId``), and the request changes nothing. One older than
PYMK_RECOMMENDATION_TTL_SECONDS is accepted but counts nothing: the service decides that
(``expired``), since the clock is not the domain's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from itsdangerous import BadSignature, Signer

from graphsvc.domain.errors import InvalidRecommendationId
from graphsvc.domain.ids import is_user_id
from graphsvc.domain.model import Suggestion

_FORMAT = "1"  # "1|version|issued|user"
_SALT = "graphsvc.recommendation"  # worth nothing to any other signer (cursors have their own)
ID_MOST = 512  # characters: a user id of 64, a version and a time, in base64, and the signature


@dataclass(frozen=True, slots=True)
class Recommendation:
    """What a recommendation id says: the ranker version, the user, and when (ms)."""

    version: int
    user_id: str
    issued_ms: int

    def expired(self, now_ms: int, ttl_ms: int) -> bool:
        return now_ms - self.issued_ms > ttl_ms


@dataclass(frozen=True, slots=True)
class Ranked:
    """A computed list of suggestions, best first, with the version of the ranker that
    computed it: the two travel together, through the cache too."""

    version: int
    items: list[Suggestion]


@dataclass(frozen=True, slots=True)
class Recommended:
    """An answer of suggestions, and the id that ties what the user does with it to the
    version that ranked it."""

    items: list[Suggestion]
    recommendation_id: str


class RecommendationCodec:
    def __init__(self, secret: str) -> None:
        self._signer = Signer(
            secret, salt=_SALT, key_derivation="hmac", digest_method=hashlib.sha256
        )

    def encode(self, recommendation: Recommendation) -> str:
        r = recommendation
        payload = f"{_FORMAT}|{r.version}|{r.issued_ms}|{r.user_id}".encode()
        body = base64.urlsafe_b64encode(payload).rstrip(b"=")
        return self._signer.sign(body).decode()

    def decode(self, token: str, user_id: str) -> Recommendation:
        """What the id says, or InvalidRecommendationId naming the field and the fault: not
        an id, not signed by this service, or issued to another user than ``user_id``."""
        payload = self._payload(token)
        fields = payload.split("|")
        if len(fields) != 4 or fields[0] != _FORMAT:
            raise InvalidRecommendationId("recommendation_id is malformed: unknown format")
        _, version, issued, owner = fields
        if not _is_count(version) or not _is_count(issued) or not is_user_id(owner):
            raise InvalidRecommendationId("recommendation_id is malformed: bad fields")
        if owner != user_id:
            raise InvalidRecommendationId(
                f"recommendation_id was issued to another user than {user_id!r}"
            )
        return Recommendation(int(version), owner, int(issued))

    def _payload(self, token: str) -> str:
        if not token or len(token) > ID_MOST or not token.isascii() or "." not in token:
            raise InvalidRecommendationId(
                "recommendation_id is malformed: expected the opaque value of a suggestions answer"
            )
        try:
            body = self._signer.unsign(token)
        except BadSignature:
            raise InvalidRecommendationId(
                "recommendation_id signature does not match: it was altered or not issued"
            ) from None
        try:
            padded = body + b"=" * (-len(body) % 4)
            return base64.b64decode(padded, altchars=b"-_", validate=True).decode()
        except (binascii.Error, ValueError):
            raise InvalidRecommendationId("recommendation_id is malformed: not base64") from None


def _is_count(text: str) -> bool:
    """Digits of a non-negative integer that both stores can take."""
    return text.isascii() and text.isdigit() and len(text) <= 18
