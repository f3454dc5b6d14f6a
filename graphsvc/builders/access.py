"""API keys and what a key may spend: the key ring (with the failed attempts it counts), and
the rate limits by key and by user."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.access import KeyRing
from graphsvc.services.rate_limits import RateLimits


def build_key_ring(core: Core) -> KeyRing:
    return KeyRing(core.neo4j.keys, core.redis.auth_failures, core.settings.access)


def build_rate_limits(core: Core) -> RateLimits:
    return RateLimits(core.redis.rate_limits, core.settings.access, core.settings.redis)
