"""What every Server-Sent Events stream of the API shares (``follower_events.py``,
``notifications.py``): a Last-Event-ID and the entry ids it is compared with, the stream's slot
among its key's EVENTS_STREAMS_PER_KEY, the periodic check of its key, the charge of a replay
to the key's read budget, and the items that end or skip part of a stream. The policies are
told in ``follower_events.py``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from graphsvc.adapters.redis.stream_slots import SLOTS_REFUSED, SLOTS_UNREACHABLE, StreamSlots
from graphsvc.domain.errors import GraphError, InvalidEventId, Overloaded, StreamLimit
from graphsvc.services.access import KeyRing
from graphsvc.services.rate_limits import Budget, RateLimited, RateLimits
from graphsvc.settings import EventSettings
from graphsvc.wire.ids import quoted

log = logging.getLogger(__name__)

QUEUE_SIZE = 1_000  # items a connection may fall behind before it is ended
SEEN_IDS = 10_000  # ids remembered per connection, to drop repeats
SLOT_LAPSE = 3  # renewal periods after which a slot not renewed lapses
_ENTRY_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})")
_U64 = 2**64 - 1


@dataclass(frozen=True, slots=True)
class Gap:
    """Entries after the client's Last-Event-ID were not replayed (more than
    EVENTS_REPLAY_MAX came after it, or they are gone): some may have been missed."""

    entry_id: str  # the newest entry skipped: resuming from it skips nothing more
    replayed: int  # the newest entries that were read instead


@dataclass(frozen=True, slots=True)
class Closed:
    """Why a stream ended (the last item of a stream its server ends)."""

    code: str
    message: str


class Entry(Protocol):
    """A stream item handed to a connection: its stream entry id, which orders it."""

    @property
    def entry_id(self) -> str: ...


T = TypeVar("T")
E = TypeVar("E", bound=Entry)


@dataclass(frozen=True, slots=True)
class OpenStream(Generic[T]):
    items: AsyncIterator[T]
    budget: Budget | None  # the key's budget after the replay's charge (None: not charged)


def resume_point(last_event_id: str) -> str:
    """A Last-Event-ID as a Redis stream entry id (canonical); 400 unless both parts fit an
    unsigned 64-bit integer."""
    found = _ENTRY_ID.fullmatch(last_event_id)
    if found is None or any(int(part) > _U64 for part in found.groups()):
        raise InvalidEventId(
            f"Last-Event-ID {quoted(last_event_id)} is not a stream entry id: <ms>-<seq>, "
            f"each an integer from 0 to {_U64}"
        )
    millis, seq = found.groups()
    return f"{int(millis)}-{int(seq)}"


def entry_key(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)


async def charge(
    budgets: RateLimits, settings: EventSettings, key_id: str, read: int
) -> Budget | None:
    """One more read request of the key's budget per EVENTS_REPLAY_CHARGE_ENTRIES entries
    read; the 429 of a spent budget when it cannot pay."""
    budget = None
    for _ in range(math.ceil(read / settings.events_replay_charge_entries)):
        budget = await budgets.spend(key_id, write=False)
        if budget is None:
            return None  # not metered (budgets off, or their Redis unreachable)
        if not budget.allowed:
            raise RateLimited(budget)
    return budget


class StreamSlot:
    """One stream's slot among its key's EVENTS_STREAMS_PER_KEY (see the module's policies)."""

    def __init__(self, slots: StreamSlots, key_id: str, settings: EventSettings) -> None:
        self._slots = slots
        self._key_id = key_id
        self._token = uuid.uuid4().hex
        self._most = settings.events_streams_per_key
        self._lapse = SLOT_LAPSE * settings.events_recheck_seconds

    async def take(self) -> None:
        try:
            held, streams = await self._slots.hold(
                self._key_id, self._token, self._most, self._lapse
            )
        except SLOTS_UNREACHABLE as exc:
            log.warning("stream slots unreachable; a stream opens uncounted (%s)", exc)
            return
        except SLOTS_REFUSED as exc:
            log.warning("redis refused the stream slots (%s)", exc)
            raise Overloaded(
                "open event streams cannot be counted now; retry later", {"Retry-After": "1"}
            ) from exc
        if not held:
            raise StreamLimit(
                f"this API key has {streams} open event streams, its limit of "
                f"{self._most}; close one first",
                {"Retry-After": str(math.ceil(self._lapse))},
            )

    async def renew(self) -> bool:
        """False when the slot lapsed and every slot is taken now."""
        try:
            held, _ = await self._slots.hold(self._key_id, self._token, self._most, self._lapse)
        except Exception as exc:  # unreachable or refusing: kept, renewed next time
            log.warning("stream slot not renewed (%s)", exc)
            return True
        return held

    async def release(self) -> None:
        try:
            await self._slots.release(self._key_id, self._token)
        except Exception as exc:  # it lapses on its own
            log.warning("stream slot not released (%s)", exc)


class StreamGuard:
    """An open stream's periodic check: its key still admitted, its slot still held."""

    def __init__(self, keys: KeyRing, token: str, slot: StreamSlot) -> None:
        self._keys = keys
        self._token = token
        self._slot = slot

    async def check(self) -> Closed | None:
        """None while the stream may go on; else why it ends."""
        try:
            await self._keys.authenticate(self._token)
        except GraphError as exc:  # revoked (401), or too many keys being looked up (503)
            return Closed(exc.code, exc.message)
        except Exception as exc:  # the key store unreachable past API_KEY_STALE_SECONDS
            log.warning("an event stream's key could not be checked; ending it (%s)", exc)
            return Closed("key_unchecked", "the API key could not be checked; reconnect later")
        if not await self._slot.renew():
            return Closed(StreamLimit.code, "this API key's open event streams are at its limit")
        return None


class MuteFilter(Protocol):
    """The watched users' mutes (``services/mutes.py``)."""

    async def muted_among(
        self, user_id: str, others: Sequence[str], *, notifications: bool = False
    ) -> set[str]: ...


class StatusFilter(Protocol):
    """The users' statuses as lists read them (``services/mirror_sync.py``)."""

    async def inactive_among(self, user_ids: Sequence[str]) -> set[str]: ...


@dataclass(eq=False)
class Watcher(Generic[E]):
    """One open connection's queue of live items. ``ended``: it fell QUEUE_SIZE items behind
    (or what it would be told could not be checked); it ends once its queue is drained, and
    its client resumes from its Last-Event-ID."""

    queue: asyncio.Queue[E] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    ended: bool = False

    def offer(self, items: Iterable[E]) -> None:
        for item in items:
            if self.ended:
                return  # it ends: a later item would move its Last-Event-ID past a gap
            if self.queue.full():
                self.ended = True
            else:
                self.queue.put_nowait(item)


async def live(
    watcher: Watcher[E],
    guard: StreamGuard,
    every: float,
    after: tuple[int, int],
    seen: deque[str],
    key: Callable[[E], str],
) -> AsyncIterator[E | Closed]:
    """A connection's live items after ``after`` (a replay's end), each once by ``key``,
    its key checked every ``every`` seconds: a last ``Closed`` when the check ends it."""
    check_at = time.monotonic() + every
    while True:
        if watcher.ended and watcher.queue.empty():
            return
        wait = check_at - time.monotonic()
        if wait <= 0:
            closed = await guard.check()
            if closed is not None:
                yield closed
                return
            check_at = time.monotonic() + every
            continue
        try:
            async with asyncio.timeout(wait):
                item = await watcher.queue.get()
        except TimeoutError:
            continue
        if entry_key(item.entry_id) <= after or key(item) in seen:
            continue
        after = entry_key(item.entry_id)
        seen.append(key(item))
        yield item


def seen_ids() -> deque[str]:
    return deque(maxlen=SEEN_IDS)
