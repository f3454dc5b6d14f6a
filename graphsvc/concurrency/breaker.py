"""Serving while Redis is unreachable: a breaker that answers reads from Neo4j instead.

Neo4j holds every answer the mirror holds, only slower, so a read that cannot reach Redis is
answered from Neo4j instead of failing. A breaker then skips Redis for REDIS_RETRY_SECONDS, so
an outage costs each request one failed attempt at most once per interval, not one each.
Each such read is noted for the request (``request_notes.note_fallback``): its response
says ``X-Graph-Source: neo4j``.

The breaker is told which errors mean the store is unreachable (trip) and which mean it
answered but refused this one read (OOM, READONLY, MISCONF: fall back, stay closed), so it
knows no driver; the composition root gives it Redis's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from graphsvc.concurrency.metrics import BREAKER_OPEN, MIRROR_FALLBACKS, MIRROR_HITS
from graphsvc.concurrency.request_notes import note_fallback

log = logging.getLogger(__name__)
T = TypeVar("T")
Errors = tuple[type[BaseException], ...]


class Breaker:
    """Open (skip Redis) for ``retry_seconds`` after one of the ``unreachable`` errors."""

    def __init__(self, retry_seconds: float, *, unreachable: Errors, refusing: Errors) -> None:
        self._retry = retry_seconds
        self._unreachable = unreachable
        self._refusing = refusing
        self._until = 0.0

    @property
    def open(self) -> bool:
        return time.monotonic() < self._until

    def trip(self, exc: BaseException) -> None:
        if not self.open:
            log.warning("redis unreachable (%s); serving from Neo4j for %.1f s", exc, self._retry)
        self._until = time.monotonic() + self._retry
        BREAKER_OPEN.set(1)

    async def read(
        self, what: str, mirrored: Callable[[], Awaitable[T]], fallback: Callable[[], Awaitable[T]]
    ) -> T:
        """``mirrored()``, or ``fallback()`` (from Neo4j) when Redis cannot be reached."""
        if not self.open:
            try:
                answer = await mirrored()
            except self._unreachable as exc:
                self.trip(exc)
            except self._refusing as exc:  # up but refusing: this read only
                log.warning("redis refused a %s read (%s); answered from Neo4j", what, exc)
            else:
                MIRROR_HITS.inc()
                if self._until:  # closed again: say so once
                    self._until = 0.0
                    BREAKER_OPEN.set(0)
                return answer
        MIRROR_FALLBACKS.inc()
        note_fallback(what)
        return await fallback()
