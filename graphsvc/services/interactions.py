"""Interactions and affinity: record interactions, write them behind to Neo4j, read affinities.

``POST /v1/interactions`` (service keys only: what a user did is reported by the product's
backend, never by the user's own client) validates a whole batch (all or nothing) and buffers
it as one entry of a Redis stream (``adapters/redis/interactions``), then answers 202. The
flusher of the workers (``workers/interaction_flusher.py``) writes the buffer to Neo4j,
aggregated per pair and day, each entry exactly once.

What the flusher applies (the query ``suggestions/interactions_apply``), so that a write
key cannot grow the graph or inflate an affinity:

- **Unknown users are dropped, never created.** An event whose actor or target is not in the
  graph (no follow or block ever named it, or it was erased) or is being erased is dropped
  when flushed, and counted by ``graphsvc_interaction_pairs_dropped_total{reason}``
  (``unknown_user``, ``erasing``). The request is not refused: checking every id of a batch
  of 1,000 against Neo4j would cost the write path that buffering exists to keep cheap, and a
  202 promises the events were accepted, not applied.
- **A daily cap per pair.** One (actor, target) pair gains at most
  INTERACTIONS_PAIR_DAILY_MAX weight per UTC day in which the service accepted its events;
  the rest is dropped (``graphsvc_interaction_pairs_dropped_total{reason="daily_cap"}`` counts
  the pairs cut). Loaders' history (``record_raw``) is not capped.

An erasure flushes the buffer before it deletes the user, so interactions accepted before
the erasure are dropped while the user is still marked, never applied to a later user who
takes the id.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.interactions import InteractionBuffer
from graphsvc.domain.affinity import WeightedInteraction
from graphsvc.domain.errors import (
    FutureEvent,
    InvalidInteraction,
    InvalidLimit,
    SelfAction,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Interaction, micros_from_datetime
from graphsvc.settings import InteractionSettings
from graphsvc.wire.ids import is_user_id, quoted


class Interactions:
    def __init__(
        self, store: SuggestionStore, buffer: InteractionBuffer, settings: InteractionSettings
    ) -> None:
        self._store = store
        self.buffer = buffer
        self._settings = settings

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
                raise InvalidInteraction(
                    f"event {n}: {name} {quoted(value)} is not a valid user id"
                )
        if event.actor == event.target:
            raise SelfAction(f"event {n}: {event.actor!r} interacts with itself")
        weight = self._settings.interaction_weights.get(event.kind)
        if weight is None:
            known = ", ".join(sorted(self._settings.interaction_weights))
            raise InvalidInteraction(
                f"event {n}: unknown kind {quoted(event.kind)} (known: {known})"
            )
        moment = event.at if event.at.tzinfo else event.at.replace(tzinfo=UTC)
        at = micros_from_datetime(moment)
        if at > horizon:
            raise FutureEvent(f"event {n}: time {event.at.isoformat()} is in the future")
        return (event.actor, event.target, weight, at)

    async def record_raw(self, events: Sequence[WeightedInteraction]) -> None:
        """Buffer already validated events (actor, target, weight, µs): loaders, evaluation.
        They replay history, so the daily cap of a pair does not apply to them."""
        if events:
            await self.buffer.append(events, capped=False)

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
