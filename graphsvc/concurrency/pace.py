"""Background work that leaves the stores to the serving path most of the time.

A worker's long jobs (the ranker's training) run the same heavy queries a person runs from the
CLI, but on a live service: at full speed they keep Neo4j's cores busy for minutes, and every
follow and read served meanwhile waits behind them (right after a fresh load, when a first
training is due at once, that was the service's worst minute). Paced, a job keeps the store
busy for at most ``share`` of the wall time: after each step that took ``t`` seconds it waits
``t * (1 / share - 1)``. The job takes ``1 / share`` times longer; what is served beside it
does not notice it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Pace:
    def __init__(self, share: float) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"a pace's share is in (0, 1], got {share}")
        self.share = share

    @property
    def full_speed(self) -> bool:
        return self.share >= 1

    @asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """Time the body, then wait for the rest of its share (nothing at full speed)."""
        started = time.monotonic()
        yield
        if not self.full_speed:
            await asyncio.sleep((time.monotonic() - started) * (1 / self.share - 1))


FULL_SPEED = Pace(1.0)
