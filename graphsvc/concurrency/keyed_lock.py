"""Locks by key, first come first served per key, also for holders of several keys at once.

A holder of several keys (a batch of writes locks every user it writes) queues on all of them
in the same instant, before it waits: it then runs once everyone queued before it on any of its
keys has finished. So each key's holders run in the order they asked, whatever other keys they
also wait for (a batch waiting for one busy user cannot be overtaken on its other users by a
later batch), and no two holders can deadlock: whoever queued first on a shared key queued
first on all of them. A key's queue exists only while someone holds or waits for it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class KeyedLock:
    def __init__(self) -> None:
        # Per key, the holder and then the waiters, in the order they asked; each is the future
        # its holder completes when it lets go of all its keys.
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        async with self.hold_all(key):
            yield

    @asynccontextmanager
    async def hold_all(self, *keys: str) -> AsyncIterator[None]:
        """Hold every key; queued on all of them at once (no await in between)."""
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ahead: set[asyncio.Future[None]] = set()
        wanted = set(keys)
        for key in wanted:
            queue = self._queues.setdefault(key, deque())
            ahead.update(queue)
            queue.append(mine)
        try:
            if ahead:
                # Everyone ahead on any key, not only the last: one that gives up while waiting
                # leaves the ones ahead of it still to wait for.
                await asyncio.wait(ahead)
            yield
        finally:
            for key in wanted:
                queue = self._queues[key]
                queue.remove(mine)
                if not queue:
                    del self._queues[key]
            mine.set_result(None)
