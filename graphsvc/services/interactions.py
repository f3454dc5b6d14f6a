"""Interactions and affinity: record interactions, write them behind to Neo4j, read affinities.

``POST /v1/interactions`` validates a whole batch (all or nothing) and buffers it as one
entry of a Redis stream (``adapters/redis/interactions``), then answers. A flusher in every
serving process writes the buffer to Neo4j, aggregated per pair, each entry exactly once: the
checkpoint moves in the same transaction, only if no other flusher moved it first.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import UTC

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.interactions import InteractionBuffer
from graphsvc.domain.affinity import WeightedInteraction, aggregate
from graphsvc.domain.errors import FutureEvent, InvalidInteraction, InvalidLimit, SelfAction
from graphsvc.domain.ids import is_user_id, validate_user_id
from graphsvc.domain.model import Interaction, micros_from_datetime
from graphsvc.services.loops import stop_if_asked
from graphsvc.settings import Settings

log = logging.getLogger(__name__)


class Interactions:
    def __init__(
        self, store: SuggestionStore, buffer: InteractionBuffer, settings: Settings
    ) -> None:
        self._store = store
        self.buffer = buffer
        self._settings = settings

    @property
    def half_life_us(self) -> int:
        """The half-life the interactions decay by (AFFINITY_HALF_LIFE_DAYS, in µs)."""
        return self._settings.affinity_half_life_us

    async def record(self, events: Sequence[Interaction]) -> int:
        """Validate a batch (all or nothing) and buffer it durably; returns how many."""
        settings = self._settings
        if not 1 <= len(events) <= settings.interactions_max_batch:
            raise InvalidInteraction(
                f"a batch holds 1 to {settings.interactions_max_batch} events, got {len(events)}"
            )
        horizon = time.time_ns() // 1_000 + settings.interactions_max_future_seconds * 1_000_000
        buffered = [self._weighted(n, event, horizon) for n, event in enumerate(events)]
        await self.buffer.append(buffered)
        return len(buffered)

    def _weighted(self, n: int, event: Interaction, horizon: int) -> WeightedInteraction:
        """One event as buffered, or the 422 naming what is wrong with it."""
        for name in ("actor", "target"):
            value = getattr(event, name)
            if not is_user_id(value):
                raise InvalidInteraction(f"event {n}: {name} {value!r} is not a valid user id")
        if event.actor == event.target:
            raise SelfAction(f"event {n}: {event.actor!r} interacts with itself")
        weight = self._settings.interaction_weights.get(event.kind)
        if weight is None:
            known = ", ".join(sorted(self._settings.interaction_weights))
            raise InvalidInteraction(f"event {n}: unknown kind {event.kind!r} (known: {known})")
        moment = event.at if event.at.tzinfo else event.at.replace(tzinfo=UTC)
        at = micros_from_datetime(moment)
        if at > horizon:
            raise FutureEvent(f"event {n}: time {event.at.isoformat()} is in the future")
        return (event.actor, event.target, weight, at)

    async def record_raw(self, events: Sequence[WeightedInteraction]) -> None:
        """Buffer already validated events (actor, target, weight, µs): loaders, evaluation."""
        if events:
            await self.buffer.append(events)

    async def flush(self) -> int:
        """Write one round of buffered batches to Neo4j; returns how many events went."""
        last = await self._store.interactions_checkpoint()
        batches = await self.buffer.read_after(last, self._settings.interactions_flush_entries)
        if not batches:
            return 0
        events = [event for batch in batches for event in batch.events]
        applied = await self._store.apply_interactions(
            aggregate(events, self._settings.affinity_half_life_us),
            checkpoint=last,
            last=batches[-1].entry_id,
            half_life_us=self._settings.affinity_half_life_us,
        )
        if not applied:  # another process flushed these first
            return 0
        await self.buffer.trim(batches[-1].entry_id)
        return len(events)

    async def flush_all(self) -> int:
        """Flush until the buffer is empty (tests, the CLI)."""
        total = 0
        while flushed := await self.flush():
            total += flushed
        return total

    async def run_flusher(self) -> None:
        """The write-behind loop of a serving process (any number may run: exactly once)."""
        while True:
            stop_if_asked()
            try:
                if await self.flush():
                    continue
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("flushing interactions failed; retrying")
            await asyncio.sleep(self._settings.interactions_flush_seconds)

    async def affinities(self, user_id: str, limit: int) -> list[tuple[str, float]]:
        """Whom the user is closest to (internal: affinity is never shown to users)."""
        validate_user_id(user_id)
        if not 1 <= limit <= 1_000:
            raise InvalidLimit(f"limit must be between 1 and 1000, got {limit}")
        return await self._store.affinities(
            user_id,
            now=time.time_ns() // 1_000,
            half_life_us=self._settings.affinity_half_life_us,
            limit=limit,
        )
