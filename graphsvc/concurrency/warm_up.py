"""Start-up work done again after the store it prepared was lost.

A process prepares a store before it serves (Neo4j plans its write statements); a store that
restarts forgets that, and the first requests after it would pay for it under their own
deadlines, holding their users' locks meanwhile. ``WarmUp`` is told when the store was lost;
the next caller that needs the store starts the work again, once for everyone waiting, and
waits for it at most as long as the caller may; a caller that cannot wait gets
``StoreWarming`` (a 503), and the work goes on for the next one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from graphsvc.domain.errors import StoreWarming

log = logging.getLogger(__name__)


class WarmUp:
    def __init__(self, what: str, work: Callable[[], Awaitable[None]]) -> None:
        self._what = what
        self._work = work
        # Losses told, and the count a completed run started after: a loss told during a
        # run makes the work due again once it ends.
        self._losses = 0
        self._done = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def due(self) -> bool:
        """The store was lost since the work last started and completed."""
        return self._losses != self._done

    async def first(self) -> None:
        """Do the work now, before the store's first use (a process that starts)."""
        await self._work()

    def lost(self) -> None:
        if not self.due:
            log.warning("%s lost: prepared again before its next use", self._what)
        self._losses += 1

    async def ready(self, wait: float) -> None:
        """Return once the work is done since the store was lost (at once when it is not
        due); ``StoreWarming`` after ``wait`` seconds, the work's own error when it failed."""
        if not self.due:
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
            self._task.add_done_callback(_retrieved)
        try:
            await asyncio.wait_for(asyncio.shield(self._task), wait)
        except TimeoutError:
            raise StoreWarming(
                f"the {self._what} is back and is being prepared again; retry shortly",
                headers={"Retry-After": "1"},
            ) from None

    async def _run(self) -> None:
        started, losses = time.monotonic(), self._losses
        await self._work()
        self._done = losses
        log.warning("%s prepared again in %.2f s", self._what, time.monotonic() - started)


def _retrieved(task: asyncio.Task[None]) -> None:
    """A failed run's error reaches the callers that waited; nobody else must be told."""
    if not task.cancelled():
        task.exception()
