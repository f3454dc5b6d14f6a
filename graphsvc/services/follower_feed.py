"""Real-time "new follower" pushes: the follow events of the event stream, per followed user.

One reader per process follows the stream (XREAD, blocking) and hands each follow event to
the queues of the connections that watch its followed user, so a thousand open connections
cost one Redis connection, not a thousand. A client that reconnects with the last id it saw
first gets what it missed from the stream (up to REPLAY_MAX entries are scanned), then the
live events. An event is handed at most once to one connection, by event id (the relay may
append an event twice). A connection that falls QUEUE_SIZE events behind is ended rather than
silently skipped: its client reconnects with Last-Event-ID and gets the rest replayed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.services.loops import stop_if_asked

log = logging.getLogger(__name__)

QUEUE_SIZE = 1_000
REPLAY_MAX = 10_000
SEEN_IDS = 10_000  # event ids remembered per connection, to drop repeats


@dataclass(frozen=True, slots=True)
class NewFollower:
    entry_id: str  # the stream entry (the SSE id a client resumes from)
    event_id: str
    follower: str
    version: int  # the follow time, µs


@dataclass(eq=False)
class _Watcher:
    queue: asyncio.Queue[NewFollower] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    overflowed: bool = False


def _entry_key(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)


class FollowerFeed:
    def __init__(self, stream: EventStream) -> None:
        self._stream = stream
        self._watchers: dict[str, set[_Watcher]] = {}
        self._reader: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def watch(
        self, user_id: str, last_id: str | None
    ) -> AsyncIterator[AsyncIterator[NewFollower]]:
        """New followers of ``user_id``; with ``last_id``, first those after that entry."""
        watcher = _Watcher()
        self._watchers.setdefault(user_id, set()).add(watcher)
        try:
            if self._reader is None or self._reader.done():  # no await since the check
                self._reader = asyncio.get_running_loop().create_task(self._read())
            missed = await self._replay(user_id, last_id) if last_id else []
            yield self._merged(missed, watcher, last_id)
        finally:
            watchers = self._watchers.get(user_id, set())
            watchers.discard(watcher)
            if not watchers:
                self._watchers.pop(user_id, None)

    async def _merged(
        self, missed: list[NewFollower], watcher: _Watcher, last_id: str | None
    ) -> AsyncIterator[NewFollower]:
        after = _entry_key(last_id) if last_id else (0, 0)
        seen: deque[str] = deque(maxlen=SEEN_IDS)
        for item in missed:
            after = _entry_key(item.entry_id)
            seen.append(item.event_id)
            yield item
        while True:
            if watcher.overflowed and watcher.queue.empty():
                return  # too far behind: the client resumes from its Last-Event-ID
            item = await watcher.queue.get()
            if _entry_key(item.entry_id) <= after or item.event_id in seen:
                continue
            after = _entry_key(item.entry_id)
            seen.append(item.event_id)
            yield item

    async def _replay(self, user_id: str, last_id: str) -> list[NewFollower]:
        found: list[NewFollower] = []
        after, scanned = last_id, 0
        while scanned < REPLAY_MAX:
            entries = await self._stream.read(after, 1_000)
            if not entries:
                break
            scanned += len(entries)
            after = entries[-1][0]
            found += [
                _new_follower(entry_id, fields)
                for entry_id, fields in entries
                if fields.get("type") == "follow" and fields.get("dst") == user_id
            ]
        return found

    async def _tail(self) -> str:
        """Where live reading starts: the stream's last entry (or now, if Redis is down: what
        is appended later is newer than that, and older entries are not live)."""
        try:
            return await self._stream.last_id()
        except REDIS_DOWN:
            return f"{time.time_ns() // 1_000_000}-0"

    async def _read(self) -> None:
        after = await self._tail()
        while self._watchers:
            stop_if_asked()
            try:
                entries = await self._stream.read(after, 500, block_ms=1_000)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis down or failing over: try again shortly
                log.warning("follower feed read failed (%s); retrying", exc)
                await asyncio.sleep(1)
                continue
            for entry_id, fields in entries:
                after = entry_id
                if fields.get("type") != "follow":
                    continue
                item = _new_follower(entry_id, fields)
                for watcher in self._watchers.get(fields.get("dst", ""), ()):
                    if watcher.queue.full():
                        watcher.overflowed = True
                    else:
                        watcher.queue.put_nowait(item)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def _new_follower(entry_id: str, fields: dict[str, str]) -> NewFollower:
    return NewFollower(
        entry_id, fields.get("id", ""), fields.get("src", ""), int(fields.get("version", 0))
    )
