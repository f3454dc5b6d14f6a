"""Real-time "new follower" pushes: the follow events of the event stream, per followed user,
and the follow requests a locked user is asked.

One reader per process follows the stream (XREAD, blocking) and hands each follow event to
the queues of the connections that watch its followed user, so a thousand open connections
cost one Redis connection, not a thousand. An event is handed at most once to one connection,
by event id (the relay may append an event twice). A connection that falls QUEUE_SIZE events
behind is ended rather than silently skipped: its client reconnects with Last-Event-ID and
gets the rest replayed (within the bounds of Replays below).

Policies:

- **Streams per key.** A key holds at most EVENTS_STREAMS_PER_KEY open streams across every
  API process, counted in Redis (``adapters/redis/stream_slots.py``); one more is a 429
  ``stream_limit`` with Retry-After. An open stream renews its slot every
  EVENTS_RECHECK_SECONDS; a slot not renewed for three times that lapses, so the streams of a
  process that stopped free their slots on their own. When Redis cannot be reached, streams
  open uncounted (as budgets fail open) and are counted again by their next renewal once it
  answers; a stream whose renewal finds every slot taken (opened uncounted meanwhile) ends.
  When Redis answers with an error, a new stream is a 503 (the cap is never switched off by a
  Redis that a flood may have filled); open ones keep going.
- **Revoked keys.** Every EVENTS_RECHECK_SECONDS an open stream checks its key again through
  the key ring, as a new request would be checked: a revoked key's streams end within
  EVENTS_RECHECK_SECONDS (plus API_KEY_CACHE_SECONDS when revoked through another process).
  A key that cannot be checked (Neo4j unreachable past API_KEY_STALE_SECONDS) ends its
  streams too: a stream lives no longer than a request with its key would be admitted.
  A stream that ends for either reason says why in a last ``closed`` item.
- **Replays.** The stream holds every user's events, so a replay's cost is the entries it
  reads, not the followers it finds. A reconnect with Last-Event-ID reads the newest
  EVENTS_REPLAY_MAX entries after that id, in one read however old the id is (``0-0``
  included): when more came after it, the older ones are skipped, since a client that far
  behind catches up from the followers list, and the stream opens with a ``gap`` item whose
  id is the newest skipped entry (resuming from it skips nothing more). An id past the
  stream's newest entry (one no server handed out) resumes from the newest entry rather than
  holding back every event until the stream gets there. A replay costs the key's read
  budget one request more per EVENTS_REPLAY_CHARGE_ENTRIES entries read (a reconnect after a
  blip one more, a resume from ``0-0`` up to EVENTS_REPLAY_MAX / EVENTS_REPLAY_CHARGE_ENTRIES
  more), spent before the stream opens: a key that cannot pay gets the 429 of a spent
  budget, and no stream.
- **Inactive actors.** A follower or requester that is suspended or spam when the event is
  handed out is left out, live and in replays, as every list leaves it out: a shadow-banned
  user's follows and requests must not reach their targets, and a user suspended after its
  event is hidden as its list entry is (read from the mirror's set of inactive users, built
  from Neo4j when missing). When the statuses cannot be read, nothing unchecked is handed
  out: the live streams of those events' users end (by their next check, within
  EVENTS_RECHECK_SECONDS, given nothing more meanwhile), to resume from their Last-Event-ID,
  and a replay is refused as the stream's own read would be.
- **Mutes.** A new follower the watched user muted with ``notifications`` is left out, live
  and in replays, while the mute is in effect (read from the user's mute mirror, built from
  Neo4j when missing). When the mutes cannot be read the follower is handed out: a stream
  never stalls on them.
- **Ids.** A Last-Event-ID is ``<ms>-<seq>`` with both parts unsigned 64-bit integers (what a
  Redis stream id is); anything else is a 400 that names the header and quotes at most a
  short prefix of the value.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.stream_slots import StreamSlots
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.concurrency.retries import stream_reads
from graphsvc.services.access import KeyRing
from graphsvc.services.rate_limits import RateLimits
from graphsvc.services.stream_policies import (
    Closed,
    Gap,
    MuteFilter,
    StatusFilter,
    StreamGuard,
    StreamSlot,
    Watcher,
    charge,
    entry_key,
    live,
    seen_ids,
)
from graphsvc.services.stream_policies import OpenStream as OpenStreamOf
from graphsvc.settings import EventSettings

log = logging.getLogger(__name__)


# The events handed to the followed user: a new follower, and a request to follow it (when it
# is locked; an approval is a follow event).
NOTIFIED = frozenset({"follow", "follow_request"})


@dataclass(frozen=True, slots=True)
class NewFollower:
    entry_id: str  # the stream entry (the SSE id a client resumes from)
    event_id: str
    follower: str  # the follower, or the requester of a follow request
    version: int  # the follow (or request) time, µs
    requested: bool = False  # a follow request waiting for approval, not a follow


StreamItem = NewFollower | Gap | Closed
OpenStream = OpenStreamOf[StreamItem]


@dataclass(frozen=True, slots=True)
class _Replay:
    items: list[NewFollower]
    gap: Gap | None
    covered: tuple[int, int]  # every entry up to this one was read (or skipped, or is older)
    read: int  # entries read


async def _unmuted(mutes: MuteFilter, user_id: str, items: list[NewFollower]) -> list[NewFollower]:
    """The new followers ``user_id`` hears of: not those whose notifications it muted. When
    the mutes cannot be read, every one (a missed follower is worse than a muted one heard;
    the followers list has them all either way)."""
    if not items:
        return items
    try:
        muted = await mutes.muted_among(
            user_id, [item.follower for item in items], notifications=True
        )
    except Exception as exc:
        log.warning("mutes of %s unreadable; its new followers are not filtered (%r)", user_id, exc)
        return items
    return [item for item in items if item.follower not in muted]


async def _inactive_actors(
    statuses: StatusFilter, batches: Iterable[list[NewFollower]]
) -> set[str]:
    """The suspended or spam followers (and requesters) among these items: one read."""
    actors = sorted({item.follower for items in batches for item in items})
    return await statuses.inactive_among(actors) if actors else set()


class FollowerEvents:
    def __init__(
        self,
        stream: EventStream,
        slots: StreamSlots,
        keys: KeyRing,
        budgets: RateLimits,
        settings: EventSettings,
        mutes: MuteFilter,
        statuses: StatusFilter,
    ) -> None:
        self._mutes = mutes
        self._statuses = statuses
        self._stream = stream
        self._slots = slots
        self._keys = keys
        self._budgets = budgets
        self._settings = settings
        self._watchers: dict[str, set[Watcher[NewFollower]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def open(
        self, key_id: str, token: str, user_id: str, last_id: str | None
    ) -> AsyncIterator[OpenStream]:
        """A stream of ``user_id``'s new followers for the key ``key_id`` (proved by
        ``token``); with ``last_id`` (a ``resume_point``), first those after that entry.
        Everything it can refuse (429 ``stream_limit``, the replay's 429) is refused here,
        before the caller starts streaming."""
        slot = StreamSlot(self._slots, key_id, self._settings)
        await slot.take()
        watcher = Watcher()
        self._watchers.setdefault(user_id, set()).add(watcher)
        try:
            if self._reader is None or self._reader.done():  # no await since the check
                self._reader = asyncio.get_running_loop().create_task(self._read())
            replay = await self._replay(user_id, last_id) if last_id is not None else None
            budget = await charge(
                self._budgets, self._settings, key_id, replay.read if replay else 0
            )
            guard = StreamGuard(self._keys, token, slot)
            yield OpenStreamOf(self._items(replay, watcher, guard), budget)
        finally:
            watchers = self._watchers.get(user_id, set())
            watchers.discard(watcher)
            if not watchers:
                self._watchers.pop(user_id, None)
            await slot.release()

    async def _items(
        self, replay: _Replay | None, watcher: Watcher[NewFollower], guard: StreamGuard
    ) -> AsyncIterator[StreamItem]:
        after = (0, 0)
        seen = seen_ids()
        if replay is not None:
            after = replay.covered
            if replay.gap is not None:
                yield replay.gap
            for item in replay.items:
                seen.append(item.event_id)
                yield item
        every = self._settings.events_recheck_seconds
        async for item in live(watcher, guard, every, after, seen, _event_id):
            yield item

    async def _replay(self, user_id: str, last_id: str) -> _Replay:
        """The newest EVENTS_REPLAY_MAX entries after ``last_id`` (one more is read to know
        whether older ones were skipped)."""
        tail = entry_key(await self._stream.last_id())
        if entry_key(last_id) >= tail:  # nothing after it (or an id past the newest entry)
            return _Replay([], None, tail, 0)
        most = self._settings.events_replay_max
        entries = await self._stream.newest_after(last_id, most + 1)
        read = len(entries)
        gap = Gap(entries.pop()[0], most) if len(entries) > most else None
        covered = max(tail, entry_key(entries[0][0])) if entries else tail
        items = [
            _new_follower(entry_id, fields)
            for entry_id, fields in reversed(entries)
            if fields.get("type") in NOTIFIED and fields.get("dst") == user_id
        ]
        inactive = await _inactive_actors(self._statuses, [items])
        items = [item for item in items if item.follower not in inactive]
        return _Replay(await _unmuted(self._mutes, user_id, items), gap, covered, read)

    async def _tail(self) -> str:
        """Where live reading starts: the stream's last entry (or now, if Redis is down: what
        is appended later is newer than that, and older entries are not live)."""
        try:
            return await self._stream.last_id()
        except REDIS_DOWN:
            return f"{time.time_ns() // 1_000_000}-0"

    def _watched(self) -> bool:
        return bool(self._watchers)

    async def _read(self) -> None:
        after = await self._tail()
        while self._watched():
            stop_if_asked()
            retrying = stream_reads(self._watched)  # while Redis is down or failing over
            try:
                entries = await retrying(self._stream.read, after, 500, block_ms=1_000)
            except Exception:  # and nobody watches any more
                return
            found: dict[str, list[NewFollower]] = {}
            for entry_id, fields in entries:
                after = entry_id
                if fields.get("type") in NOTIFIED and fields.get("dst", "") in self._watchers:
                    found.setdefault(fields["dst"], []).append(_new_follower(entry_id, fields))
            await self._hand_out_active(found)

    async def _hand_out_active(self, found: dict[str, list[NewFollower]]) -> None:
        """Hand out a batch's events but those of inactive actors; when their statuses cannot
        be read, end the streams of the batch's users instead (they resume from their
        Last-Event-ID, so nothing is lost and nothing unchecked is told)."""
        try:
            inactive = await _inactive_actors(self._statuses, found.values())
        except Exception as exc:
            log.warning("statuses unreadable; %d users' event streams end (%r)", len(found), exc)
            for user_id in found:
                for watcher in self._watchers.get(user_id, ()):
                    watcher.ended = True
            return
        for user_id, items in found.items():
            active = [item for item in items if item.follower not in inactive]
            self._hand_out(user_id, await _unmuted(self._mutes, user_id, active))

    def _hand_out(self, user_id: str, items: list[NewFollower]) -> None:
        for watcher in self._watchers.get(user_id, ()):
            watcher.offer(items)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def _new_follower(entry_id: str, fields: dict[str, str]) -> NewFollower:
    return NewFollower(
        entry_id,
        fields.get("id", ""),
        fields.get("src", ""),
        int(fields.get("version", 0)),
        requested=fields.get("type") == "follow_request",
    )


def _event_id(item: NewFollower) -> str:
    """What a connection drops repeats by: the relay may append an event twice."""
    return item.event_id
