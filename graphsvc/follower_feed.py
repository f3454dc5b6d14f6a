"""Real-time "new follower" pushes: the follow events of the event stream, per followed user.

One reader per process follows the stream (XREAD, blocking) and hands each follow event to
the queues of the connections that watch its followed user, so a thousand open connections
cost one Redis connection, not a thousand. A client that reconnects with the last id it saw
first gets what it missed from the stream (up to FEED_REPLAY_MAX entries are scanned), then
the live events; an event is never handed twice to one connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from graphsvc.degraded import MIRROR_DOWN
from graphsvc.events import EventLog

log = logging.getLogger(__name__)

QUEUE_SIZE = 1_000  # a connection that falls this far behind loses the oldest pushes
REPLAY_MAX = 10_000


@dataclass(frozen=True, slots=True)
class NewFollower:
    entry_id: str  # the stream entry (the SSE id a client resumes from)
    event_id: str
    follower: str
    version: int  # the follow time, µs


def _entry_key(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)


class FollowerFeed:
    def __init__(self, events: EventLog) -> None:
        self._events = events
        self._watchers: dict[str, set[asyncio.Queue[NewFollower]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def watch(
        self, user_id: str, last_id: str | None
    ) -> AsyncIterator[AsyncIterator[NewFollower]]:
        """New followers of ``user_id``; with ``last_id``, first those after that entry."""
        queue: asyncio.Queue[NewFollower] = asyncio.Queue(QUEUE_SIZE)
        self._watchers.setdefault(user_id, set()).add(queue)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read(await self._tail()))
        try:
            missed = await self._replay(user_id, last_id) if last_id else []
            yield self._merged(missed, queue, last_id)
        finally:
            watchers = self._watchers.get(user_id, set())
            watchers.discard(queue)
            if not watchers:
                self._watchers.pop(user_id, None)

    async def _tail(self) -> str:
        try:
            return await self._events.last_id()
        except MIRROR_DOWN:
            return "0-0"

    async def _merged(
        self, missed: list[NewFollower], queue: asyncio.Queue[NewFollower], last_id: str | None
    ) -> AsyncIterator[NewFollower]:
        seen = _entry_key(last_id) if last_id else (0, 0)
        for item in missed:
            seen = _entry_key(item.entry_id)
            yield item
        while True:
            item = await queue.get()
            if _entry_key(item.entry_id) > seen:
                seen = _entry_key(item.entry_id)
                yield item

    async def _replay(self, user_id: str, last_id: str) -> list[NewFollower]:
        found: list[NewFollower] = []
        after, scanned = last_id, 0
        while scanned < REPLAY_MAX:
            entries = await self._events.read(after, 1_000)
            if not entries:
                break
            scanned += len(entries)
            after = entries[-1][0]
            found += [
                _new_follower((entry_id, fields))
                for entry_id, fields in entries
                if fields.get("type") == "follow" and fields.get("dst") == user_id
            ]
        return found

    async def _read(self, after: str) -> None:
        while self._watchers:
            try:
                entries = await self._events.read(after, 500, block_ms=1_000)
            except asyncio.CancelledError:
                raise
            except MIRROR_DOWN:
                await asyncio.sleep(1)
                continue
            except Exception:
                log.exception("follower feed read failed")
                await asyncio.sleep(1)
                continue
            for entry_id, fields in entries:
                after = entry_id
                if fields.get("type") != "follow":
                    continue
                item = _new_follower((entry_id, fields))
                for queue in self._watchers.get(fields.get("dst", ""), ()):
                    if queue.full():
                        queue.get_nowait()
                    queue.put_nowait(item)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def _new_follower(entry: tuple[str, dict[str, str]]) -> NewFollower:
    entry_id, fields = entry
    return NewFollower(
        entry_id, fields.get("id", ""), fields.get("src", ""), int(fields.get("version", 0))
    )
