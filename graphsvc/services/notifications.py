"""A user's notifications as Server-Sent Events: a ``posted`` item for each new post of an
author whose bell it rings (a follow with ``notify`` on), read from its own notification
stream, where the bells' job rang it (``workers/bell_jobs.py``).

The stream is the user's alone, so a replay costs what the user was sent, not what everyone
was: a reconnect with Last-Event-ID gets every entry after it that the stream still holds
(NOTIFICATIONS_MAX at most), and a ``gap`` item first when entries after it were trimmed.
Live, one poller per process reads the streams of every user it streams to, in one pipelined
round trip every NOTIFICATIONS_POLL_MS, and hands each new entry to that user's connections:
a thousand open streams cost one read, not a thousand blocked connections.

Policies are the follower events' (``follower_events.py``, ``stream_policies.py``): slots per
key, the key's periodic check, a replay charged to the key's read budget, an id handed at most
once per connection. Each item is checked as it is handed out, live and in replays: not when
the author is suspended or spam, not when the user mutes the author or either blocks the other
(a block made after the bell rang), not when the post was deleted. When those cannot be read,
nothing unchecked is told: the user's streams end, to resume from their Last-Event-ID.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from graphsvc.adapters.redis.notifications import Entry, NotificationStreams
from graphsvc.adapters.redis.stream_slots import StreamSlots
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.services.access import KeyRing
from graphsvc.services.rate_limits import RateLimits
from graphsvc.services.stream_policies import (
    Closed,
    Gap,
    MuteFilter,
    OpenStream,
    StatusFilter,
    StreamGuard,
    StreamSlot,
    Watcher,
    charge,
    entry_key,
    live,
    seen_ids,
)
from graphsvc.settings import EventSettings, NotificationSettings

log = logging.getLogger(__name__)

POLL_COUNT = 500  # entries one poll reads per user


@dataclass(frozen=True, slots=True)
class Posted:
    entry_id: str  # the notification stream's entry (the SSE id a client resumes from)
    author: str
    post_id: str
    at: int  # the post's time, µs


NotificationItem = Posted | Gap | Closed


class BlockFilter(Protocol):
    async def blocked_among(self, reader: str, authors: Sequence[str]) -> set[str]: ...


class DeletedPosts(Protocol):
    async def deleted_among(self, members: Sequence[str]) -> set[str]: ...


@dataclass(frozen=True, slots=True)
class NotificationChecks:
    """What decides whether a rung notification is told."""

    mutes: MuteFilter
    statuses: StatusFilter
    blocks: BlockFilter
    posts: DeletedPosts

    async def told(self, user_id: str, items: list[Posted]) -> list[Posted]:
        if not items:
            return items
        authors = sorted({item.author for item in items})
        hidden = await self.statuses.inactive_among(authors)
        hidden |= await self.mutes.muted_among(user_id, authors)
        hidden |= await self.blocks.blocked_among(user_id, authors)
        deleted = await self.posts.deleted_among([f"{i.author}|{i.post_id}" for i in items])
        return [
            item
            for item in items
            if item.author not in hidden and f"{item.author}|{item.post_id}" not in deleted
        ]


class Notifications:
    def __init__(
        self,
        streams: NotificationStreams,
        slots: StreamSlots,
        keys: KeyRing,
        budgets: RateLimits,
        events: EventSettings,
        settings: NotificationSettings,
        checks: NotificationChecks,
    ) -> None:
        self._streams = streams
        self._slots = slots
        self._keys = keys
        self._budgets = budgets
        self._events = events
        self._settings = settings
        self._checks = checks
        self._watchers: dict[str, set[Watcher[Posted]]] = {}
        self._positions: dict[str, str] = {}  # per watched user: the newest entry polled
        self._poller: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def open(
        self, key_id: str, token: str, user_id: str, last_id: str | None
    ) -> AsyncIterator[OpenStream[NotificationItem]]:
        """A stream of ``user_id``'s notifications for the key ``key_id`` (proved by
        ``token``); with ``last_id`` (a ``resume_point``), first those after that entry.
        Everything it can refuse is refused here, before the caller starts streaming."""
        slot = StreamSlot(self._slots, key_id, self._events)
        await slot.take()
        watcher = Watcher()
        try:
            ends = await self._streams.ends(user_id)
            if user_id not in self._watchers:
                self._positions[user_id] = ends.last
            self._watchers.setdefault(user_id, set()).add(watcher)
            if self._poller is None or self._poller.done():
                self._poller = asyncio.get_running_loop().create_task(self._poll())
            replay: list[NotificationItem] = []
            if last_id is not None:
                replay = await self._replay(user_id, last_id, ends.trimmed)
            budget = await charge(self._budgets, self._events, key_id, len(replay))
            guard = StreamGuard(self._keys, token, slot)
            start = max([ends.last, last_id or "0-0"], key=entry_key)
            yield OpenStream(self._items(replay, start, watcher, guard), budget)
        finally:
            watchers = self._watchers.get(user_id, set())
            watchers.discard(watcher)
            if not watchers:
                self._watchers.pop(user_id, None)
                self._positions.pop(user_id, None)
            await slot.release()

    async def _replay(self, user_id: str, last_id: str, trimmed: str) -> list[NotificationItem]:
        entries = await self._streams.after(user_id, last_id, 2 * self._settings.notifications_max)
        items = await self._checks.told(user_id, [_posted(entry) for entry in entries])
        if entry_key(last_id) < entry_key(trimmed):
            return [Gap(trimmed, len(entries)), *items]
        return list(items)

    async def _items(
        self,
        replay: list[NotificationItem],
        start: str,
        watcher: Watcher[Posted],
        guard: StreamGuard,
    ) -> AsyncIterator[NotificationItem]:
        after = entry_key(start)
        seen = seen_ids()
        for item in replay:
            if isinstance(item, Posted):
                seen.append(item.entry_id)
                after = max(after, entry_key(item.entry_id))
            yield item
        every = self._events.events_recheck_seconds
        async for item in live(watcher, guard, every, after, seen, _entry_id):
            yield item

    async def _poll(self) -> None:
        """Every NOTIFICATIONS_POLL_MS, the new entries of every watched user's stream."""
        while self._watchers:
            stop_if_asked()
            await asyncio.sleep(self._settings.notifications_poll_ms / 1000)
            try:
                found = await self._streams.after_many(dict(self._positions), POLL_COUNT)
            except Exception as exc:  # Redis away: the next poll reads from the same place
                log.warning("notification streams unreadable (%r)", exc)
                continue
            for user_id, entries in found.items():
                if user_id in self._positions:
                    self._positions[user_id] = entries[-1][0]
                await self._hand_out(user_id, [_posted(entry) for entry in entries])

    async def _hand_out(self, user_id: str, items: list[Posted]) -> None:
        watchers = self._watchers.get(user_id, set())
        try:
            told = await self._checks.told(user_id, items)
        except Exception as exc:
            log.warning("notifications of %s unchecked; its streams end (%r)", user_id, exc)
            for watcher in watchers:
                watcher.ended = True
            return
        for watcher in watchers:
            watcher.offer(told)

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)


def _entry_id(item: Posted) -> str:
    return item.entry_id


def _posted(entry: Entry) -> Posted:
    entry_id, fields = entry
    return Posted(entry_id, fields["author"], fields["post"], int(fields.get("at", 0)))
