"""Group commit: writes that arrive together are committed together.

Policy. A write waits with the others not yet in a batch. They close when there are enough of
them to fill every free slot (WRITE_BATCH_MAX each), or WRITE_BATCH_WINDOW_MS after the first
one came, whichever is first. They are then shared out evenly among the free slots, at most
WRITE_BATCH_MAX to a batch (unless sharing is off: one batch takes them, up to its most),
and one call commits each batch (one Neo4j transaction, one Redis
round trip). Each caller gets its own write's outcome (or exception) only once that call
returned, that is once its write is committed and mirrored. At most WRITE_BATCH_CONCURRENCY
batches commit at once: while all are busy, arriving writes wait for the next free slot, and
a batch starts as soon as one finishes. So a quiet process pays about the window per write,
and a busy one pays nothing extra: its batches grow with the load, and the fixed costs of a
commit are shared by more writes.

Why share out rather than fill one batch while another slot stays idle: a batch's steps (the
Neo4j transaction, then the mirror round trip) run one after another, and two half batches
overlap them, one in Neo4j while the other is in Redis. Writers in a closed loop (clients
that send their next write when the last one is answered) settle into batches that take
turns. Not when the writes share a user, as the service's own writes for one user do (an
import's, a move's): the halves would wait for each other's locks of that user, one after
the other, at the cost of two transactions for one.

A caller that gives up (its request is cancelled) does not take its write out of a batch that
is already committing, as with any timeout; a write not yet in a committing batch is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

W = TypeVar("W")
R = TypeVar("R")
# Commits one batch: an outcome (or the exception of that write alone) per write, in order.
CommitBatch = Callable[[list[W]], Awaitable[Sequence[R | BaseException]]]


class GroupCommit(Generic[W, R]):
    def __init__(
        self,
        commit: CommitBatch[W, R],
        *,
        window_ms: float,
        max_size: int,
        concurrency: int,
        share: bool = True,
    ) -> None:
        self._commit = commit
        self._share = share
        self._window = window_ms / 1_000
        self._max = max_size
        self._concurrency = concurrency
        self._pending: list[tuple[W, asyncio.Future[R]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._due = False
        self._running: set[asyncio.Task[None]] = set()

    async def submit(self, write: W) -> R:
        """Queue ``write`` and return its outcome once its batch is committed."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._pending.append((write, future))
        self._pump()
        return await future

    def _pump(self) -> None:
        """Start every batch that may start now; otherwise make sure one will."""
        while self._pending and len(self._running) < self._concurrency:
            free = self._concurrency - len(self._running) if self._share else 1
            if not self._due and len(self._pending) < self._max * free:
                if self._timer is None:
                    self._timer = asyncio.get_running_loop().call_later(self._window, self._expire)
                return
            size = share_out(len(self._pending), free, self._max)
            self._start(self._pending[:size])
            del self._pending[:size]
            # Writes left over have waited for a free slot already: no new window for them.
            self._due = bool(self._pending)
        if self._timer is not None and not self._pending:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        self._due = True
        self._pump()

    def _start(self, batch: list[tuple[W, asyncio.Future[R]]]) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = asyncio.get_running_loop().create_task(self._run(batch))
        self._running.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._due = self._due or bool(self._pending)
        self._pump()

    async def _run(self, batch: list[tuple[W, asyncio.Future[R]]]) -> None:
        live = [(write, future) for write, future in batch if not future.done()]
        if not live:
            return
        try:
            outcomes = await self._commit([write for write, _ in live])
        except Exception as exc:  # the batch failed as a whole: every write with it
            for _, future in live:
                if not future.done():
                    future.set_exception(exc)
        else:
            for (_, future), outcome in zip(live, outcomes, strict=True):
                if future.done():  # its caller gave up
                    continue
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
        finally:
            # Cancelled mid-commit (shutdown): nobody may wait forever. It may have committed.
            for _, future in live:
                if not future.done():
                    future.set_exception(RuntimeError("the write's batch was cancelled"))


def share_out(pending: int, free: int, most: int) -> int:
    """The size of the next batch: ``pending`` writes shared out evenly among ``free`` slots,
    at most ``most`` each."""
    return min(most, -(-pending // free))
