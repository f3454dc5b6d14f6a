"""Background loops that stop when they are told to, and a shutdown that cannot hang.

A serving process cancels its loops (the relay, the interaction flusher, the timelines'
consumer and job queue) and its jobs when it stops. A library a loop awaits can swallow that
cancellation: a SIGTERM that reached the relay inside a Neo4j read left `graphsvc serve`
waiting on the relay forever, its listening socket closed. So each loop asks
``stop_if_asked`` at every round, which ends it once its task has been asked to stop whether
or not the request got through; and ``stopped`` waits a bounded time, then says which tasks
would not end (the process ends anyway).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

log = logging.getLogger(__name__)

STOP_SECONDS = 10.0


def stop_if_asked() -> None:
    """Raise CancelledError in a task that was cancelled, even if something swallowed it."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def stopped(tasks: Iterable[asyncio.Task[None]], seconds: float = STOP_SECONDS) -> None:
    """Cancel these tasks and wait for them, at most ``seconds``."""
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if not pending:
        return
    _, left = await asyncio.wait(pending, timeout=seconds)
    for task in left:
        log.warning("task %s did not stop within %.0f s; leaving it", task.get_name(), seconds)
