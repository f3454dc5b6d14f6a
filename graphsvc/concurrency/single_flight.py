"""Rebuilds of cold users on read: one per user at a time, and a bounded number at once.

Many concurrent reads of one cold user (a celebrity after a flush) share a single rebuild (run
by the first of them; if that one is cancelled, by its request's deadline, the others go on
without it); a flood of reads of different cold users runs at most REBUILD_CONCURRENCY snapshot queries against
Neo4j at once, and a read that cannot get a slot within REBUILD_WAIT_SECONDS is told to retry
(503) rather than piling onto the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

from graphsvc.domain.errors import Overloaded

T = TypeVar("T")


class SingleFlight:
    def __init__(
        self,
        concurrency: int,
        wait_seconds: float,
        busy: str = "too many cold users are being rebuilt from the graph database",
    ) -> None:
        self._flights: dict[Hashable, asyncio.Future] = {}
        self._slots = asyncio.Semaphore(concurrency)
        self._wait = wait_seconds
        self._busy = busy

    async def run(self, key: Hashable, work: Callable[[], Awaitable[T]]) -> T:
        """The result of ``work``, run once for every caller asking for ``key`` meanwhile."""
        flight = self._flights.get(key)
        if flight is not None:
            try:
                return await asyncio.shield(flight)
            except asyncio.CancelledError:
                if not flight.cancelled() or _cancelling():
                    raise
                # The caller that ran the work was cancelled (its deadline), not this one:
                # this caller runs it itself, or joins whoever does by now.
                return await self.run(key, work)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._flights[key] = future
        try:
            try:
                await asyncio.wait_for(self._slots.acquire(), self._wait)
            except TimeoutError:
                raise Overloaded(
                    f"{self._busy}; retry shortly",
                    headers={"Retry-After": "1"},
                ) from None
            try:
                result = await work()
            finally:
                self._slots.release()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: callers that joined get it, nobody else must
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._flights[key]


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
