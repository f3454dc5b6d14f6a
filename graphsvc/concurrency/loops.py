"""Background loops, written once: ``supervise`` repeats a round until its task is stopped,
survives a failed round, and waits between rounds for work; and a shutdown that cannot hang.

Every background loop (the outbox relay, the interaction flusher, the timelines' consumer,
the job claims, the reconcile rounds) is a round function given to ``supervise``: a round
does one unit of work and says whether more is waiting (then the next starts at once), else
the loop waits ``poll_seconds``, or until ``wake`` says work arrived. A round that fails (a
store is down: its work stays in the store) is logged and tried again after
``retry_seconds``.

A process cancels its loops and its jobs when it stops. A library a loop awaits can swallow
that cancellation: a SIGTERM that reached the relay inside a Neo4j read left `graphsvc serve`
waiting on the relay forever, its listening socket closed. So a loop asks ``stop_if_asked``
at every round, which ends it once its task has been asked to stop whether or not the
request got through; and ``stopped`` waits a bounded time, then says which tasks would not
end (the process ends anyway).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from graphsvc.concurrency.retries import failed_rounds

log = logging.getLogger(__name__)

STOP_SECONDS = 10.0

Round = Callable[[], Awaitable[object]]  # one round; true when more work is waiting
Wake = Callable[[float], Awaitable[None]]  # returns once work arrived, or after its seconds


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


async def supervise(
    name: str,
    one_round: Round,
    poll_seconds: float,
    wake: Wake | None = None,
    *,
    retry_seconds: float | None = None,
) -> None:
    """Run ``one_round`` until the task is cancelled: again at once while it says more work
    is waiting, else once ``wake`` returns (given ``poll_seconds``) or ``poll_seconds`` have
    passed; after a failure, ``retry_seconds`` later (``poll_seconds`` unless given)."""

    async def attempt() -> None:
        stop_if_asked()
        while await one_round():
            stop_if_asked()
        if wake is None:
            await asyncio.sleep(poll_seconds)
        else:
            await wake(poll_seconds)

    pause = poll_seconds if retry_seconds is None else retry_seconds
    while True:  # a store that is down fails rounds: the work waits in its store
        await failed_rounds(name, pause)(attempt)
