"""Who may call what: API keys, their scopes, and the acting user of a user-bound key.

A key is ``gsk_<id>_<secret>``: the id (64 random bits, hex) finds the stored record, the
secret (256 random bits) proves possession. Only an HMAC-SHA256 of the whole key under a
server-side secret is stored; the digest is compared in constant time. Random keys need no
slow password hash: there is nothing to guess.

Scopes are additive and independent (``admin`` does not imply ``read``), so a key carries
exactly what it was granted. A key bound to a user acts only as that user on the routes that
change something on a user's behalf; service keys (unbound) act for anyone. Some routes take
service keys only (a bound key gets 403 ``service_key_required``): what they record is
reported by the product's backend, not by a user's client, such as interactions, which weigh
on other users' suggestions.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass

from graphsvc.domain.errors import GraphError
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.privacy import EVERYONE, Viewer
from graphsvc.wire.ids import quoted
from graphsvc.wire.scopes import Scope

KEY_PREFIX = "gsk_"
VIEWER_HEADER = "X-Graph-Viewer"  # the viewer a service key names for one request
_KEY = re.compile(r"gsk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")  # matched whole (fullmatch)


ALL_SCOPES = frozenset(Scope)


class Unauthenticated(GraphError):
    status = 401
    code = "unauthenticated"

    def __init__(self, message: str) -> None:
        super().__init__(message, {"WWW-Authenticate": 'Bearer realm="graphsvc"'})


class AuthThrottled(GraphError):
    """Too many failed authentications from one client address: refused before any lookup."""

    status = 429
    code = "auth_throttled"


class MissingScope(GraphError):
    status = 403
    code = "missing_scope"


class WrongActingUser(GraphError):
    status = 403
    code = "wrong_acting_user"


class ServiceKeyRequired(GraphError):
    """A key bound to a user on a route for service keys only (a rule: a 403)."""

    status = 403
    code = "service_key_required"


class InvalidKeyRequest(GraphError):
    status = 422
    code = "invalid_key_request"


class BoundKeyScope(GraphError):
    """Only read and write keys may be bound to a user (a rule, so a 403: see errors.py)."""

    status = 403
    code = "bound_key_scope"


class UnknownKey(GraphError):
    status = 404
    code = "unknown_key"


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    digest: str
    scopes: frozenset[Scope]
    user: str | None
    name: str
    created: int
    revoked: bool = False


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key as created: the record, and the key itself (shown once, never stored)."""

    key: ApiKey
    token: str


def parse_scopes(text: str) -> frozenset[Scope]:
    """``read,write`` to scopes; an unknown or empty list is refused by name."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(names) - {s.value for s in Scope})
    if unknown or not names:
        allowed = ", ".join(s.value for s in Scope)
        raise InvalidKeyRequest(f"scopes must be a non-empty list of {allowed}; got {quoted(text)}")
    return frozenset(Scope(name) for name in names)


def new_token() -> tuple[str, str]:
    """A fresh (key id, key)."""
    key_id = secrets.token_hex(8)
    return key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def key_id_of(token: str) -> str | None:
    """The id part of a well-formed key, else None (nothing to look up)."""
    match = _KEY.fullmatch(token)
    return match.group(1) if match else None


def digest(server_secret: bytes, token: str) -> str:
    return hmac.digest(server_secret, token.encode(), "sha256").hex()  # one C call


def matches(key: ApiKey, server_secret: bytes, token: str) -> bool:
    """The key proves this record (constant-time compare) and the record is live."""
    return hmac.compare_digest(key.digest, digest(server_secret, token)) and not key.revoked


def bearer_token(header: str | None) -> str:
    """The key of an ``Authorization: Bearer <key>`` header; 401 when absent or malformed."""
    if not header:
        raise Unauthenticated("an API key is required: send Authorization: Bearer <key>")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <key>'")
    return token.strip()


def authorize(
    key: ApiKey, needed: Scope, acting_user: str | None, *, service_only: bool = False
) -> None:
    """403 unless the key has the scope and, when bound to a user, acts as that user (and
    the route is not for service keys only).

    ``acting_user`` is the user a route changes something for (None on routes that act for
    no one in particular)."""
    if needed not in key.scopes:
        raise MissingScope(f"this key lacks the {needed.value!r} scope")
    if service_only and key.user is not None:
        raise ServiceKeyRequired(
            f"this key is bound to user {key.user!r}; only a service key (bound to no user) "
            "may call this route"
        )
    if key.user is not None and acting_user is not None and acting_user != key.user:
        raise WrongActingUser(f"this key acts only as user {key.user!r}, not as {acting_user!r}")


def viewer_of_key(key: ApiKey, named: str | None) -> Viewer:
    """Who reads with ``key``, given the viewer a request names (``X-Graph-Viewer``, or None).

    A bound key reads as its user and may name no one else. A service key reads as the user
    it names, or anonymously. An admin or internal key sees everything, unless it names a
    viewer: then it sees what that viewer sees."""
    if named is not None:
        validate_user_id(named, VIEWER_HEADER)
    if key.user is not None:
        if named is not None and named != key.user:
            raise WrongActingUser(
                f"this key reads only as user {key.user!r}, not as {named!r} ({VIEWER_HEADER})"
            )
        return Viewer(key.user)
    if named is not None:
        return Viewer(named)
    if key.scopes & {Scope.ADMIN, Scope.INTERNAL}:
        return EVERYONE
    return Viewer()
