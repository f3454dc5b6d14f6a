"""API keys: created and revoked through Neo4j (the truth), checked on every request from a
short-lived cache in each API process.

Cache policy: a looked-up key (or the absence of one) is trusted for API_KEY_CACHE_SECONDS,
so a revocation reaches every process within that time while a busy key costs one Neo4j read
per process per period. The caches are bounded (least recently used go first); ids with no
key are kept apart, so a flood of made-up keys never evicts a real one; concurrent misses of
one key share one read. When Neo4j cannot be reached, a key already cached keeps working for
up to API_KEY_STALE_SECONDS after it was read, because refusing every caller during a
database blip turns a partial outage into a total one (warm reads are served from Redis);
past that, or for a key never seen, the answer is the 503 of a store that is down. Only keys
with read and write may be bound to a user: an admin or internal key acts for everyone.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from graphsvc.adapters.neo4j.keys import KeyStore
from graphsvc.adapters.neo4j.store import STORE_DOWN
from graphsvc.domain.access import (
    ApiKey,
    BoundKeyScope,
    InvalidKeyRequest,
    NewKey,
    Scope,
    Unauthenticated,
    UnknownKey,
    digest,
    key_id_of,
    matches,
    new_token,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.services.single_flight import SingleFlight
from graphsvc.settings import Settings

log = logging.getLogger(__name__)

CACHE_ENTRIES = 10_000
UNKNOWN_ENTRIES = 1_000  # ids with no key, kept apart so a flood of them evicts no real key
BOUND_SCOPES = frozenset({Scope.READ, Scope.WRITE})
NAME_MAX = 100


class KeyRing:
    def __init__(self, store: KeyStore, settings: Settings) -> None:
        self._store = store
        self._secret = settings.api_key_secret.encode()
        self._ttl = settings.api_key_cache_seconds
        self._stale_limit = settings.api_key_stale_seconds
        self._cache: OrderedDict[str, tuple[float, ApiKey]] = OrderedDict()
        self._unknown: OrderedDict[str, float] = OrderedDict()
        self._loads = SingleFlight(
            concurrency=32, wait_seconds=2.0, busy="too many API keys are being looked up"
        )

    # -- managing keys (the CLI and the admin routes) ------------------------------------------

    async def create(
        self, scopes: frozenset[Scope], *, user: str | None = None, name: str = ""
    ) -> NewKey:
        if not scopes:
            raise InvalidKeyRequest("a key needs at least one scope")
        if user is not None:
            validate_user_id(user, "user")
            if not scopes <= BOUND_SCOPES:
                # admin could mint an unbound key or erase anyone; internal reads others' data
                raise BoundKeyScope("a key bound to a user may hold read and write only")
        if len(name) > NAME_MAX:
            raise InvalidKeyRequest(f"a key's name is at most {NAME_MAX} characters")
        key_id, token = new_token()
        key = ApiKey(
            id=key_id,
            digest=digest(self._secret, token),
            scopes=scopes,
            user=user,
            name=name,
            created=time.time_ns() // 1_000,
        )
        await self._store.create(key)
        return NewKey(key, token)

    async def list(self) -> Sequence[ApiKey]:
        return await self._store.list()

    async def revoke(self, key_id: str) -> bool:
        """True when revoked by this call, False when it already was; 404 when unknown."""
        revoked = await self._store.revoke(key_id)
        if revoked is None:
            raise UnknownKey(f"no API key has id {key_id!r}")
        self._cache.pop(key_id, None)
        return revoked

    # -- checking a request's key ----------------------------------------------------------------

    async def authenticate(self, token: str) -> ApiKey:
        """The live key this token proves; 401 otherwise (unknown, wrong secret, revoked)."""
        key_id = key_id_of(token)
        key = await self._lookup(key_id) if key_id else None
        if key is None or not matches(key, self._secret, token):
            raise Unauthenticated("the API key is unknown or revoked")
        return key

    async def _lookup(self, key_id: str) -> ApiKey | None:
        now = time.monotonic()
        cached = self._cache.get(key_id)
        if cached is not None and now - cached[0] < self._ttl:
            self._cache.move_to_end(key_id)
            return cached[1]
        missing_since = self._unknown.get(key_id)
        if missing_since is not None and now - missing_since < self._ttl:
            return None
        try:
            key = await self._loads.run(key_id, lambda: self._store.find(key_id))
        except STORE_DOWN as exc:
            if cached is None or now - cached[0] > self._stale_limit:
                raise
            # trusted a while longer (never past API_KEY_STALE_SECONDS since it was read)
            log.warning("neo4j unreachable; key %s served from a stale cache (%s)", key_id, exc)
            return cached[1]
        self._remember(key_id, key)
        return key

    def _remember(self, key_id: str, key: ApiKey | None) -> None:
        now = time.monotonic()
        if key is None:
            self._cache.pop(key_id, None)
            _put(self._unknown, key_id, now, UNKNOWN_ENTRIES)
        else:
            self._unknown.pop(key_id, None)
            _put(self._cache, key_id, (now, key), CACHE_ENTRIES)


def _put(table: OrderedDict[str, Any], key_id: str, value: Any, most: int) -> None:
    """Newest last; the least recently used go first past ``most``."""
    table[key_id] = value
    table.move_to_end(key_id)
    while len(table) > most:
        table.popitem(last=False)
