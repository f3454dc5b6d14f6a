"""The outbox relay: every event committed in Neo4j reaches the event stream, and every
user whose mirror write was lost is repaired, even across crashes and Redis outages.

Each round takes the outbox events (``:GraphEvent``) older than OUTBOX_GRACE_SECONDS (long
enough for a request to have appended its own). Events the stream has acked are forgotten.
For the rest, the mirror write of the same request was lost too, so their users are repaired
from Neo4j first (their lists and counts, and their privacy settings after a lost change of
them), and then the events are appended. Only then are they deleted from the
outbox: a relay that dies half way repeats the round (consumers drop repeated ids).

A private event (a mute) is never appended: its muter's mute mirror is built again from Neo4j
(a newer snapshot replaces what the lost write left behind), and the event is forgotten.

While Redis is unreachable the rounds fail and the outbox grows; it is the durable list of
dirty users, and it drains when Redis is back (also after a restart that lost everything).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.domain.model import GraphEvent
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.mutes import Mutes
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.telemetry import RELAY_REPAIRS
from graphsvc.settings import EventSettings, MirrorSettings

log = logging.getLogger(__name__)


@dataclass
class RelayReport:
    delivered: int = 0  # events taken from the outbox
    recovered: int = 0  # of those, appended by the relay (their request's append was lost)
    repaired: int = 0  # users whose mirrors were rebuilt
    elsewhere: bool = False  # another process held the relay's lease: this one relayed nothing


class Relay:
    def __init__(
        self,
        outbox: OutboxStore,
        stream: EventStream,
        sync: MirrorSync,
        privacy: PrivacyRules,
        cache: SuggestionCache,
        settings: EventSettings,
        mirror: MirrorSettings,
        mutes: Mutes,
    ) -> None:
        self._outbox = outbox
        self._mutes = mutes
        self._stream = stream
        self._sync = sync
        self._privacy = privacy
        self._cache = cache
        self._settings = settings
        self._rebuild_batch = mirror.rebuild_batch_users
        self.round_seconds = settings.outbox_relay_seconds
        self._lease = max(60.0, 10 * settings.outbox_relay_seconds)

    async def once(
        self, *, grace: float | None = None, progress: Callable[[int], None] | None = None
    ) -> RelayReport:
        """Drain the outbox of events older than ``grace`` seconds (OUTBOX_GRACE_SECONDS);
        ``progress`` is told how many events each step delivered."""
        settings = self._settings
        grace = settings.outbox_grace_seconds if grace is None else grace
        report = RelayReport()
        holder = uuid.uuid4().hex
        if not await self._stream.take_lease(holder, self._lease):
            return RelayReport(elsewhere=True)  # another process is relaying
        try:
            while await self._stream.renew_lease(holder, self._lease):  # else another took over
                cutoff = time.time_ns() // 1_000 - int(grace * 1_000_000)
                events = await self._outbox.due(cutoff, settings.outbox_batch)
                if not events:
                    break
                if not await self._deliver(events, holder, report):
                    return report  # too slow: another relay took over
                if progress is not None:
                    progress(len(events))
                if len(events) < settings.outbox_batch:
                    break
        finally:
            await self._stream.release_lease(holder)
        if report.recovered:
            log.warning(
                "relay: %d of %d events had lost their append; %d users repaired",
                report.recovered,
                report.delivered,
                report.repaired,
            )
        return report

    async def _deliver(self, events: list[GraphEvent], holder: str, report: RelayReport) -> bool:
        """One step: repair the users of lost events, append those, forget them all. False
        when the lease was lost half way (the next holder repeats the step)."""
        acked = await self._stream.acked_among([e.id for e in events])
        lost = [e for e in events if e.id not in acked]
        if lost:
            # a list event has no mirror to repair: it is appended alone
            users = sorted(
                {u for e in lost if not e.private and not e.list for u in (e.src, e.dst) if u}
            )
            muters = sorted({e.src for e in lost if e.private})
            if muters:  # a mute's mirror is the muter's alone; its event is never appended
                await self._mutes.build(muters)
                await self._cache.invalidate(*muters)
            size = self._rebuild_batch
            for start in range(0, len(users), size):
                if not await self._stream.renew_lease(holder, self._lease):
                    return False
                chunk = users[start : start + size]
                await self._sync.repair(chunk, force=False)
                settings_changed = {e.src for e in lost if e.type == "privacy"}
                await self._privacy.repair([u for u in chunk if u in settings_changed], force=False)
                await self._cache.invalidate(*chunk)
            await self._stream.append(lost)
            report.recovered += len(lost)
            report.repaired += len(users) + len(muters)
            RELAY_REPAIRS.inc(len(users) + len(muters))
        await self._outbox.delete([e.id for e in events])
        await self._stream.forget_acked([e.id for e in events], older_than=86_400)
        report.delivered += len(events)
        return True

    async def round(self) -> bool:
        """A round of the worker's relay loop; the next comes OUTBOX_RELAY_SECONDS later
        (while a store is down, rounds fail and the outbox keeps the work)."""
        await self.once()
        return False
