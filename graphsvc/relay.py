"""The outbox relay: every event committed in Neo4j reaches the event stream, and every
user whose mirror write was lost is repaired, even across crashes and Redis outages.

Each round takes the outbox events (``:GraphEvent``) older than OUTBOX_GRACE_SECONDS (long
enough for a request to have appended its own). Events the stream has acked are forgotten.
For the rest, the mirror write of the same request was lost too, so their users are repaired
from Neo4j first, and then the events are appended. Only then are they deleted from the
outbox: a relay that dies half way repeats the round (consumers drop repeated ids).

While Redis is unreachable the rounds fail and the outbox grows; it is the durable list of
dirty users, and it drains when Redis is back (also after a restart that lost everything).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass

from tqdm import tqdm

from graphsvc.reconcile import repair
from graphsvc.service import GraphService

log = logging.getLogger(__name__)


@dataclass
class RelayReport:
    delivered: int = 0  # events taken from the outbox
    recovered: int = 0  # of those, appended by the relay (their request's append was lost)
    repaired: int = 0  # users whose mirrors were rebuilt


async def relay_once(
    service: GraphService, *, grace: float | None = None, progress: bool = False
) -> RelayReport:
    """Drain the outbox of events older than ``grace`` seconds (OUTBOX_GRACE_SECONDS)."""
    settings = service.settings
    grace = settings.outbox_grace_seconds if grace is None else grace
    report = RelayReport()
    holder = uuid.uuid4().hex
    lease = max(60.0, 10 * settings.outbox_relay_seconds)
    if not await service.events.take_lease(holder, lease):
        return report  # another process is relaying
    try:
        with tqdm(desc="relayed", unit="event", disable=not progress) as bar:
            while await service.events.renew_lease(holder, lease):  # else another relay took over
                cutoff = time.time_ns() // 1_000 - int(grace * 1_000_000)
                events = await service.graph.outbox_due(cutoff, settings.outbox_batch)
                if not events:
                    break
                acked = await service.events.acked_among([e.id for e in events])
                lost = [e for e in events if e.id not in acked]
                if lost:
                    users = sorted({u for e in lost for u in (e.src, e.dst) if u})
                    size = settings.rebuild_batch_users
                    for start in range(0, len(users), size):
                        if not await service.events.renew_lease(holder, lease):
                            return report  # too slow: another relay took over
                        chunk = users[start : start + size]
                        await repair(service, chunk, force=False)
                        await service.pymk.cache.invalidate(*chunk)
                    await service.events.append(lost)
                    report.recovered += len(lost)
                    report.repaired += len(users)
                await service.graph.outbox_delete([e.id for e in events])
                await service.events.forget_acked([e.id for e in events], older_than=86_400)
                report.delivered += len(events)
                bar.update(len(events))
                if len(events) < settings.outbox_batch:
                    break
    finally:
        await service.events.release_lease(holder)
    if report.recovered:
        log.warning(
            "relay: %d of %d events had lost their append; %d users repaired",
            report.recovered, report.delivered, report.repaired,
        )  # fmt: skip
    return report


async def run_relay(service: GraphService) -> None:
    """Relay rounds every OUTBOX_RELAY_SECONDS until cancelled. Also restarts, once a minute,
    this process's background jobs (fan-outs, erasures) that gave up while a store was down."""
    every = service.settings.outbox_relay_seconds
    next_retry = time.monotonic() + 60
    while True:
        try:
            if time.monotonic() >= next_retry:
                next_retry = time.monotonic() + 60
                service.background.retry_given_up()
            await relay_once(service)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a store is down: the outbox keeps the work
            log.warning("relay round failed (%s); retrying", exc)
        await asyncio.sleep(every)
