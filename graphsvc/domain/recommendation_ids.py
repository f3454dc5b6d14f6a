"""Recommendation ids: what ties a follow, a show or a dismissal back to the model version
that ranked the list it came from.

Every answer of suggestions carries one (``recommendation_id``); a client sends it back with
what the user did about a suggestion of that answer. It names the version of the ranker that
computed the list (a list served from the cache carries the version it was computed with),
the user it was made for, when it was made (ms), and which users the answer served, as
``2|version|issued|user|`` then a digest of each served user (DIGEST_BYTES of a keyed
BLAKE2b), in URL-safe base64, signed with itsdangerous (HMAC-SHA256, its key derived from
CURSOR_SECRET under a salt of its own, so no cursor is a recommendation id and no id a
cursor). Nobody can forge one, nor edit the version or the users it names; the user is
checked, so one user's id cannot count another's follows. The id is opaque but not secret:
its payload is readable, but for the served users, whose digests need the secret to match.

The served users are signed into the id rather than stored: an answer costs no write and no
memory for the id's life, and checking a target costs no round trip; the id grows by
DIGEST_BYTES per suggestion (a page of SUGGESTIONS_KEPT stays under ID_MOST). A digest is
keyed, so nobody can make up a user id that matches one; a guess matches one of a page of 50
once in about 86 million tries.

Policy: an id that is malformed, altered or another user's is refused
(``InvalidRecommendationId``), and the request changes nothing. One older than
SUGGEST_RECOMMENDATION_TTL_SECONDS is accepted but counts nothing: the service decides that
(``expired``), since the clock is not the domain's. An id counts only for a user its answer
served (``RecommendationCodec.served``); one of the first format (``1|...``, issued before
ids named their users) is accepted and counts for none.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from itsdangerous import BadSignature, Signer

from graphsvc.domain.errors import InvalidRecommendationId
from graphsvc.domain.model import Suggestion
from graphsvc.wire.ids import is_user_id

_FORMAT = b"2"  # "2|version|issued|user|" and the served users' digests
_UNNAMED = b"1"  # "1|version|issued|user": the first format, which named no served user
_SALT = "graphsvc.recommendation"  # worth nothing to any other signer (cursors have their own)
_DIGEST_KEY = b"graphsvc.recommendation.served"  # the served users' digests' key, from the secret
DIGEST_BYTES = 4
SERVED_MOST = 50  # digests an id holds: a page of suggestions (SUGGESTIONS_KEPT)
# characters: a user id of 64, a version, a time and 50 digests, in base64, and the signature
ID_MOST = 512


@dataclass(frozen=True, slots=True)
class Recommendation:
    """What a recommendation id says: the ranker version, the user, when (ms), and the
    digests of the users its answer served."""

    version: int
    user_id: str
    issued_ms: int
    served: frozenset[bytes] = frozenset()

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
        self._digest_key = hmac.new(secret.encode(), _DIGEST_KEY, hashlib.sha256).digest()

    def digests(self, user_ids: Iterable[str]) -> frozenset[bytes]:
        """The digests of the users an answer serves, as an id holds them."""
        return frozenset(self._digest(user_id) for user_id in user_ids)

    def served(self, recommendation: Recommendation, user_id: str) -> bool:
        """Whether the recommendation's answer served ``user_id``."""
        return self._digest(user_id) in recommendation.served

    def _digest(self, user_id: str) -> bytes:
        return hashlib.blake2b(
            user_id.encode(), digest_size=DIGEST_BYTES, key=self._digest_key
        ).digest()

    def encode(self, recommendation: Recommendation) -> str:
        r = recommendation
        if len(r.served) > SERVED_MOST:
            raise ValueError(f"an id names at most {SERVED_MOST} served users")
        head = b"|".join([_FORMAT, *(str(f).encode() for f in (r.version, r.issued_ms))])
        payload = b"|".join([head, r.user_id.encode(), b"".join(sorted(r.served))])
        body = base64.urlsafe_b64encode(payload).rstrip(b"=")
        return self._signer.sign(body).decode()

    def decode(self, token: str, user_id: str) -> Recommendation:
        """What the id says, or InvalidRecommendationId naming the field and the fault: not
        an id, not signed by this service, or issued to another user than ``user_id``."""
        version, issued, owner, served = _fields(self._payload(token))
        if owner != user_id:
            raise InvalidRecommendationId(
                f"recommendation_id was issued to another user than {user_id!r}"
            )
        return Recommendation(int(version), owner, int(issued), served)

    def _payload(self, token: str) -> bytes:
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
        return _decoded(body)


def named_version(token: str) -> int:
    """The ranker version an id names, read without checking its signature (the payload is
    readable, not secret): for a caller judging the answers of a service whose secret it may
    not hold (an evaluation through the API), never for counting anything."""
    return int(_fields(_decoded(token.rsplit(".", 1)[0].encode()))[0])


def _decoded(body: bytes) -> bytes:
    """An id's payload from its unpadded URL-safe base64."""
    try:
        return base64.b64decode(body + b"=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRecommendationId("recommendation_id is malformed: not base64") from None


def _fields(payload: bytes) -> tuple[str, str, str, frozenset[bytes]]:
    """(version, issued, user, served digests) of a signed payload of either format."""
    fields = payload.split(b"|", 4)
    if fields[0] == _UNNAMED and len(fields) == 4:
        fields.append(b"")  # it named no served user: it counts for none
    elif fields[0] != _FORMAT or len(fields) != 5:
        raise InvalidRecommendationId("recommendation_id is malformed: unknown format")
    _, *texts, digests = fields
    try:
        version, issued, owner = (text.decode("ascii") for text in texts)
    except UnicodeDecodeError:
        raise InvalidRecommendationId("recommendation_id is malformed: bad fields") from None
    if not _is_count(version) or not _is_count(issued) or not is_user_id(owner):
        raise InvalidRecommendationId("recommendation_id is malformed: bad fields")
    if len(digests) % DIGEST_BYTES or len(digests) > SERVED_MOST * DIGEST_BYTES:
        raise InvalidRecommendationId("recommendation_id is malformed: bad served users")
    served = frozenset(digests[i : i + DIGEST_BYTES] for i in range(0, len(digests), DIGEST_BYTES))
    return version, issued, owner, served


def _is_count(text: str) -> bool:
    """Digits of a non-negative integer that both stores can take."""
    return text.isascii() and text.isdigit() and len(text) <= 18
