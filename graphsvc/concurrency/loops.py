"""Background loops, written once: ``supervise`` repeats a round until its task is stopped,
survives a failed round, and waits between rounds for work; ``keep_running`` runs a process's
loops and starts again one that ended; and a shutdown that cannot hang.

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

A loop can still end while its process runs: a library that cancels the task it runs in (a
timeout of its own whose cancellation escapes), an error its round lets through, or a return.
A process that went on without it would do none of that loop's work and say nothing. So
``keep_running`` runs each loop in a task of its own and, when one ends while the process was
not asked to stop, logs it (an error, with its traceback) and starts it again after
RESTART_FIRST_SECONDS, twice as long after each end in a row, up to RESTART_LONGEST_SECONDS
(a loop that ran longer than that since its start is back to the first wait). What is no
``Exception`` (an exit, an interrupt) still ends the process, as it should.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping

from graphsvc.concurrency.retries import failed_rounds

log = logging.getLogger(__name__)

STOP_SECONDS = 10.0
RESTART_FIRST_SECONDS = 1.0
RESTART_LONGEST_SECONDS = 60.0

Round = Callable[[], Awaitable[object]]  # one round; true when more work is waiting
Wake = Callable[[float], Awaitable[None]]  # returns once work arrived, or after its seconds
Loop = Callable[[], Awaitable[None]]  # starts a loop that runs until its task is cancelled


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


def restart_wait(
    last: float | None,
    ran: float,
    first: float = RESTART_FIRST_SECONDS,
    longest: float = RESTART_LONGEST_SECONDS,
) -> float:
    """The wait before a loop that ended after running ``ran`` seconds starts again, given
    the wait before its last start (None: it never ended before): ``first``, doubled for
    each end in a row, at most ``longest``; ``first`` again once it ran longer than that."""
    if last is None or ran > longest:
        return first
    return min(2 * last, longest)


async def keep_running(
    loops: Mapping[str, Loop],
    *,
    first: float = RESTART_FIRST_SECONDS,
    longest: float = RESTART_LONGEST_SECONDS,
) -> None:
    """Run every loop, each in a task named after it, until this task is cancelled (then
    stop them all); one that ends meanwhile starts again (``restart_wait``), logged."""
    running = asyncio.get_running_loop()
    kept = [
        running.create_task(_kept(name, loop, first, longest), name=f"keeping {name}")
        for name, loop in loops.items()
    ]
    try:
        await asyncio.gather(*kept)
    finally:
        await stopped(kept)


async def _kept(name: str, loop: Loop, first: float, longest: float) -> None:
    """One loop, started again whenever it ends while this task was not asked to stop."""
    this = asyncio.current_task()
    assert this is not None
    wait: float | None = None
    while True:
        started = time.monotonic()
        task = asyncio.get_running_loop().create_task(_run(loop), name=name)
        error: BaseException | None = None
        try:
            await task  # cancelling this task cancels the loop's too
            why = "it returned"
        except asyncio.CancelledError:
            if this.cancelling():
                raise
            why = "it was cancelled, though its process was not stopping"
        except Exception as exc:
            why, error = f"{type(exc).__name__}: {exc}", exc
        wait = restart_wait(wait, time.monotonic() - started, first, longest)
        log.error(
            "loop %s ended (%s); starting it again in %.1f s", name, why, wait, exc_info=error
        )
        await asyncio.sleep(wait)


async def _run(loop: Loop) -> None:
    await loop()
