"""API keys: created and revoked through Neo4j (the truth), checked on every request from a
short-lived cache in each API process.

Cache policy: a looked-up key (or the absence of one) is trusted for API_KEY_CACHE_SECONDS,
so a revocation reaches every process within that time while a busy key costs one Neo4j read
per process per period. A key in use is read again in the background once half that time has
passed, so a busy key never waits for its refresh. The caches are bounded (least recently used
go first); ids with no key are kept apart, so a flood of made-up keys never evicts a real one;
concurrent misses of one key share one read. Reads of keys this process has never seen and
refreshes of keys it knows pass through separate gates, so a flood of made-up keys can fill
only the first and never makes a real key wait. When Neo4j cannot be reached, a key already
cached keeps working for up to API_KEY_STALE_SECONDS after it was read, because refusing every
caller during a database blip turns a partial outage into a total one (warm reads are served
from Redis); past that, or for a key never seen, the answer is the 503 of a store that is
down. Only keys with read and write may be bound to a user: an admin or internal key acts for
everyone.

Throttling policy: each failed authentication (an unknown, revoked or wrong key) is counted
per client address in Redis; an address past AUTH_FAILURES_MAX failures in its
AUTH_FAILURE_WINDOW_SECONDS window gets a 429 auth_throttled for any key this process has not
cached, before any lookup, until the window ends. A key cached here is never throttled, so a
flood from an address shared with real callers (a proxy) delays only keys not yet seen. When
Redis cannot be reached the count is skipped (the gates above still bound the lookups).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from graphsvc.adapters.neo4j.keys import KeyStore
from graphsvc.adapters.neo4j.store import STORE_DOWN
from graphsvc.adapters.redis.auth_failures import AuthFailures
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.concurrency.single_flight import SingleFlight
from graphsvc.domain.access import (
    ApiKey,
    AuthThrottled,
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
from graphsvc.domain.errors import UserErasing
from graphsvc.domain.ids import validate_user_id
from graphsvc.settings import AccessSettings

log = logging.getLogger(__name__)

CACHE_ENTRIES = 10_000
UNKNOWN_ENTRIES = 1_000  # ids with no key, kept apart so a flood of them evicts no real key
BOUND_SCOPES = frozenset({Scope.READ, Scope.WRITE})
NAME_MAX = 100
FRESH_LOOKUPS = 16  # concurrent reads of keys this process has not seen (made-up ones among them)
REFRESHES = 16  # concurrent re-reads of keys it knows: a flood of the first never blocks these
REFRESH_AHEAD = 0.5  # a key in use is read again once this share of its trust time has passed


class KeyRing:
    def __init__(self, store: KeyStore, failures: AuthFailures, settings: AccessSettings) -> None:
        self._store = store
        self._secret = settings.api_key_secret.encode()
        self._ttl = settings.api_key_cache_seconds
        self._stale_limit = settings.api_key_stale_seconds
        self._cache: OrderedDict[str, tuple[float, ApiKey]] = OrderedDict()
        self._unknown: OrderedDict[str, float] = OrderedDict()
        # the gate a flood of made-up keys can fill: reads of keys this process never saw
        self.fresh_lookups = SingleFlight(
            concurrency=FRESH_LOOKUPS,
            wait_seconds=2.0,
            busy="too many new API keys are being looked up",
        )
        self._refreshes = SingleFlight(
            concurrency=REFRESHES, wait_seconds=2.0, busy="too many API keys are being refreshed"
        )
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._failures = failures
        self._failures_max = settings.auth_failures_max

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
        if not await self._store.create(key):
            raise UserErasing(f"user {user!r} is being erased: no key may be bound to it")
        return NewKey(key, token)

    async def list(self) -> Sequence[ApiKey]:
        return await self._store.list()

    async def revoke(self, key_id: str) -> bool:
        """True when revoked by this call, False when it already was; 404 when unknown."""
        revoked = await self._store.revoke(key_id)
        if revoked is None:
            raise UnknownKey(f"no API key has id {key_id!r}")
        self.forget([key_id])
        return revoked

    def forget(self, key_ids: Sequence[str]) -> None:
        """Drop revoked keys from this process's cache (the next request reads them again)."""
        for key_id in key_ids:
            self._cache.pop(key_id, None)

    @property
    def trust_seconds(self) -> float:
        """The longest this process may go on trusting a key after its revocation committed:
        from its cache, or from a stale cache while Neo4j cannot be reached (plus a second for
        the clocks of the processes and of Neo4j)."""
        return max(self._ttl, self._stale_limit) + 1.0

    # -- checking a request's key ----------------------------------------------------------------

    async def authenticate(self, token: str, client: str | None = None) -> ApiKey:
        """The live key this token proves; 401 otherwise (unknown, wrong secret, revoked), and
        429 when ``client`` (the caller's address) has failed too often."""
        key_id = key_id_of(token)
        known = self._fresh(key_id) if key_id else None
        if known is not None and matches(known, self._secret, token):
            return known
        await self._throttle(client)
        key = await self._lookup(key_id) if key_id else None
        if key is None or not matches(key, self._secret, token):
            await self._failed(client)
            raise Unauthenticated("the API key is unknown or revoked")
        return key

    def _fresh(self, key_id: str) -> ApiKey | None:
        """The cached key while it is trusted, read again in the background past half that."""
        cached = self._cache.get(key_id)
        if cached is None:
            return None
        age = time.monotonic() - cached[0]
        if age >= self._ttl:
            return None
        self._cache.move_to_end(key_id)
        if age >= self._ttl * REFRESH_AHEAD and key_id not in self._refreshing:
            task = asyncio.create_task(self._refresh_ahead(key_id))
            self._refreshing[key_id] = task
            task.add_done_callback(lambda _: self._refreshing.pop(key_id, None))
        return cached[1]

    async def _refresh_ahead(self, key_id: str) -> None:
        began = time.monotonic()
        try:
            key = await self._refreshes.run(key_id, lambda: self._store.find(key_id))
            self._remember(key_id, key, began)
        except Exception as exc:  # the cached key stays until it expires; the next use retries
            log.warning("refreshing key %s failed: %s", key_id, exc)

    async def _lookup(self, key_id: str) -> ApiKey | None:
        now = time.monotonic()
        cached = self._cache.get(key_id)
        missing_since = self._unknown.get(key_id)
        if missing_since is not None and now - missing_since < self._ttl:
            return None
        gate = self._refreshes if cached is not None else self.fresh_lookups
        try:
            key = await gate.run(key_id, lambda: self._store.find(key_id))
        except STORE_DOWN as exc:
            if cached is None or now - cached[0] > self._stale_limit:
                raise
            # trusted a while longer (never past API_KEY_STALE_SECONDS since it was read)
            log.warning("neo4j unreachable; key %s served from a stale cache (%s)", key_id, exc)
            return cached[1]
        self._remember(key_id, key, now)
        return key

    async def _throttle(self, client: str | None) -> None:
        if client is None:
            return
        try:
            failures, left = await self._failures.count(client)
        except REDIS_DOWN:
            return
        if failures >= self._failures_max:
            wait = str(max(1, math.ceil(left)))
            raise AuthThrottled(
                f"too many failed authentications from this address; retry in {wait} s",
                {"Retry-After": wait},
            )

    async def _failed(self, client: str | None) -> None:
        if client is None:
            return
        with contextlib.suppress(*REDIS_DOWN):
            await self._failures.add(client)

    def _remember(self, key_id: str, key: ApiKey | None, now: float) -> None:
        """Cache what a read begun at ``now`` found (its age counts from before the read: a
        read that began before a revocation committed may not have seen it)."""
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
