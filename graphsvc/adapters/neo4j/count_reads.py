"""Post-commit count reads of concurrent writes, coalesced into one query.

A write's counts must come from a read that starts after its commit (the followed user is not
locked by the write, so nothing else is sure to include it). Many writes commit at once under
load, so they share reads: a write registers its users after its commit and waits; the next
query starts after every registered commit, so each write gets counts that include it. Writes
that arrive while a query is running wait for the following one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from graphsvc.domain.model import UserCounts

_Waiter = tuple[Sequence[str], "asyncio.Future[dict[str, UserCounts]]"]
# Reads users' counts now, where writes go (``SnapshotStore.read_counts``).
ReadCounts = Callable[[Sequence[str]], Awaitable[dict[str, UserCounts]]]


class CountReads:
    def __init__(self, read_counts: ReadCounts) -> None:
        self._read_counts = read_counts
        self._waiting: list[_Waiter] = []
        self._task: asyncio.Task[None] | None = None

    async def read(self, user_ids: Sequence[str]) -> dict[str, UserCounts]:
        future: asyncio.Future[dict[str, UserCounts]] = asyncio.get_running_loop().create_future()
        self._waiting.append((user_ids, future))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        batch: list[_Waiter] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                ids = sorted({uid for user_ids, _ in batch for uid in user_ids})
                try:
                    found = await self._read_counts(ids)
                except Exception as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for user_ids, future in batch:
                    if future.done():  # its caller gave up
                        continue
                    # A user erased meanwhile has no reading: its half of a change is moot.
                    future.set_result({uid: found[uid] for uid in user_ids if uid in found})
                batch = []
        finally:
            # Ended early (cancelled at shutdown): nobody may wait forever.
            for _, future in batch + self._waiting:
                if not future.done():
                    future.set_exception(RuntimeError("count read was cancelled"))
            self._waiting = []
