"""The write order, in one place.

Every write of the follow graph goes the same way:

1. **Queue.** One user's writes queue in this process (per-user locks, first come first
   served; a batch of writes queues on all its users at once), rather than in Neo4j's lock
   queue, where many waiters make Neo4j report (false) deadlocks and roll whole batches back
   (they run again within milliseconds, but the work is lost).
2. **Commit in Neo4j**, the truth: the changes and their outbox events (``:GraphEvent``) in one
   transaction (a batch of writes that arrived together: ``group_commit``). The caller does
   this step, under the locks; the rules are checked there, per write.
3. **After the commit**, one Redis round trip carries the mirror write (versioned Lua: on a
   single Redis one script call for the batch's users, on a cluster one per user; a status or
   privacy change is one more, before it), the invalidation of the users' suggestion caches
   and of their lists of pulled (celebrity) authors, and the events' appends to the stream
   with their acks (the timelines' consumer group reads them), which run only once the mirror
   write did (on a cluster, in a second round trip; after a SCRIPT FLUSH, the mirror write
   goes again just after them: ``Mirror.apply_many``). No-op repeats are mirrored too: the
   scripts are idempotent, so a retried request repairs a mirror write that an earlier
   attempt lost.
4. **A Redis failure** never undoes or fails the committed write. Unreachable: the breaker
   opens (reads go to Neo4j for REDIS_RETRY_SECONDS). Refused (OOM, READONLY): logged, and any
   ack that got through is withdrawn. Either way the outbox relay appends the events and
   repairs the users from Neo4j later, as it does when this process dies between 2 and 3.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from graphsvc.adapters.failures import RedisError
from graphsvc.adapters.neo4j.relations import ReadCounts
from graphsvc.adapters.neo4j.store import STORE_DOWN
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.mutes import MuteMirror
from graphsvc.adapters.redis.privacy import PrivacyMirror
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.adapters.redis.timelines import HomeTimelines
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.keyed_lock import KeyedLock
from graphsvc.domain.model import EdgeChange, GraphEvent
from graphsvc.domain.mutes import MuteChange
from graphsvc.domain.privacy import Privacy

log = logging.getLogger(__name__)


class Writes:
    def __init__(
        self,
        mirror: Mirror,
        statuses: StatusSet,
        privacy: PrivacyMirror,
        stream: EventStream,
        cache: SuggestionCache,
        home_timelines: HomeTimelines,
        breaker: Breaker,
        mutes: MuteMirror,
        read_counts: ReadCounts,
    ) -> None:
        self._mirror = mirror
        self._read_counts = read_counts
        self._mutes = mutes
        self._statuses = statuses
        self._privacy = privacy
        self._stream = stream
        self._cache = cache
        self._home_timelines = home_timelines
        self._breaker = breaker
        self._locks = KeyedLock()

    def hold(self, *user_ids: str) -> AbstractAsyncContextManager[None]:
        """Step 1: the in-process write locks of these users, queued on all at once (so two
        holders of the same users cannot deadlock). Background jobs take them per batch."""
        return self._locks.hold_all(*user_ids)

    async def after_commit(
        self,
        changes: Sequence[EdgeChange] = (),
        events: Sequence[GraphEvent] = (),
        *,
        invalidate: Sequence[str] = (),
        status: tuple[str, bool, int] | None = None,
        privacy: tuple[str, Privacy, int] | None = None,
    ) -> None:
        """Steps 3 and 4 for a committed change: its edge changes, its events, the users
        whose suggestions it changed, a status change (user, inactive, version) and a change
        of privacy settings (user, settings, version)."""
        if self._breaker.open or any(change.at is None for change in changes):
            return  # the relay appends the events, and repairs the users from Neo4j

        alongside = [
            *self._cache.invalidations(invalidate),
            *self._home_timelines.invalidations(invalidate),
        ]
        after = self._stream.appends(events)
        gaps: set[str] = set()
        async with self._repaired_if_lost(events):
            if status is not None:
                await self._statuses.set_status(*status)
            if privacy is not None:
                await self._privacy.set(*privacy)
            gaps = await self._mirror.apply_many(changes, alongside=alongside, after=after)
        if gaps:
            await self._close_gaps(sorted(gaps))

    async def _close_gaps(self, user_ids: Sequence[str]) -> None:
        """Counts that wait behind a numbered change that has not come (another process's
        write, late or lost) are read anew under the users' locks; the reading is numbered
        after every change so far. A failure leaves them to reconcile."""
        try:
            await self._mirror.refresh_counts(await self._read_counts(user_ids))
        except (*STORE_DOWN, RedisError) as exc:
            log.warning("counts of %d users wait behind a gap (%r)", len(user_ids), exc)

    async def after_mute(self, changes: Sequence[MuteChange]) -> None:
        """Steps 3 and 4 for committed mute writes: the muters' mute mirrors, their suggestion
        caches invalidated alongside (a muted user is never suggested), and the events acked
        once the mirror write is done. A mute's event is private: acked, never appended."""
        if self._breaker.open or not changes:
            return  # the relay repairs the muters from Neo4j
        events = [change.event for change in changes if change.event is not None]
        muters = sorted({change.muter for change in changes})
        async with self._repaired_if_lost(events):
            await self._mutes.apply(
                changes,
                alongside=self._cache.invalidations(muters),
                after=self._stream.appends(events),
            )

    @contextlib.asynccontextmanager
    async def _repaired_if_lost(self, events: Sequence[GraphEvent]) -> AsyncIterator[None]:
        """Step 4: a Redis failure leaves the events unacked, for the relay to repair."""
        try:
            yield
        except REDIS_DOWN as exc:
            self._breaker.trip(exc)
        except RedisError:
            log.exception("mirror update failed; the outbox relay repairs it")
            with contextlib.suppress(RedisError):  # an ack that got through must not stay
                await self._stream.unack([event.id for event in events])
