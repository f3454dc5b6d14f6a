"""Neo4j's clock read after commits, one query shared by the writes that commit together.

A mirrored edge change carries a time after its commit: a list snapshot read later includes
it, one read earlier may not (``lua/common.lua``). Many writes commit at once under load, so
they share reads: a write waits after its commit, and the next read starts after every
waiting commit, so each write gets a time later than its own commit. Writes that arrive while
a read is running wait for the following one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

# Reads Neo4j's clock now, where writes go (``SnapshotStore.clock``).
ReadClock = Callable[[], Awaitable[int]]


class CommitClock:
    def __init__(self, read_clock: ReadClock) -> None:
        self._read_clock = read_clock
        self._waiting: list[asyncio.Future[int]] = []
        self._task: asyncio.Task[None] | None = None

    async def read(self) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        batch: list[asyncio.Future[int]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    at = await self._read_clock()
                except Exception as exc:
                    for future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for future in batch:
                    if not future.done():  # its caller gave up
                        future.set_result(at)
                batch = []
        finally:
            # Ended early (cancelled at shutdown): nobody may wait forever.
            for future in batch + self._waiting:
                if not future.done():
                    future.set_exception(RuntimeError("the clock read was cancelled"))
            self._waiting = []
