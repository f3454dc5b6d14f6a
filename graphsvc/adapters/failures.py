"""The stores' failures, named once for the layers above, which import no driver: what an
outage raises (a 503 for the API), and one operator's line for any failure of a store."""

from __future__ import annotations

from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired
from neo4j.exceptions import TransientError as Neo4jTransientError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["NEO4J_UNAVAILABLE", "REDIS_UNAVAILABLE", "RedisError", "store_failure"]

# A Neo4j stopping, starting (DatabaseUnavailable is a TransientError) or out of reach.
NEO4J_UNAVAILABLE: tuple[type[Exception], ...] = (
    ServiceUnavailable,
    SessionExpired,
    Neo4jTransientError,
)
REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError)


def store_failure(exc: BaseException) -> str | None:
    """One line naming the store and its reason (Neo4j's error code, when it sent one); None
    for what is no store's failure."""
    if isinstance(exc, RedisError):
        return f"redis: {type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(exc, Neo4jError):
        message = " ".join((exc.message or "").split())
        return f"neo4j: {exc.code}: {message}"
    if isinstance(exc, DriverError):
        return f"neo4j: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return None
