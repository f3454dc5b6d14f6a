"""The interaction flusher: buffered interactions written behind to Neo4j's affinities.

``services/interactions.py`` buffers each accepted batch as one entry of a Redis stream; the
flusher of the workers writes the buffer to Neo4j, aggregated per pair and day, each entry
exactly once: the checkpoint moves in the same transaction, only if no other flusher moved it
first, so any number of workers may flush at once. What a flush applies (unknown users
dropped, a daily cap per pair) is said in ``services/interactions.py``.

An erasure flushes the buffer (``flush_through``) before it deletes the user, so interactions
accepted before the erasure are dropped while the user is still marked, never applied to a
later user who takes the id.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.interactions import InteractionBuffer
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.domain.affinity import UNCAPPED, aggregate_days, day_of_ms
from graphsvc.services.telemetry import INTERACTION_PAIRS_DROPPED
from graphsvc.settings import BoundSettings, InteractionSettings


class InteractionFlusher:
    def __init__(
        self,
        store: SuggestionStore,
        buffer: InteractionBuffer,
        settings: InteractionSettings,
        bounds: BoundSettings,
    ) -> None:
        self._store = store
        self._buffer = buffer
        self._settings = settings
        self._daily_max = bounds.interactions_pair_daily_max
        self.round_seconds = settings.interactions_flush_seconds

    async def flush(self) -> int:
        """Write one round of buffered batches to Neo4j; returns how many events went (the
        worker's flusher loop flushes again at once while some did)."""
        last = await self._store.interactions_checkpoint()
        batches = await self._buffer.read_after(last, self._settings.interactions_flush_entries)
        if not batches:
            return 0
        half_life = self._settings.affinity_half_life_us
        done = await self._store.apply_interactions(
            aggregate_days(
                ((day_of_ms(b.accepted_ms) if b.capped else UNCAPPED, b.events) for b in batches),
                half_life,
            ),
            checkpoint=last,
            last=batches[-1].entry_id,
            half_life_us=half_life,
            daily_max=self._daily_max,
        )
        if not done.applied:  # another process flushed these first
            return 0
        for reason, pairs in (
            ("unknown_user", done.unknown),
            ("erasing", done.erasing),
            ("daily_cap", done.capped),
        ):
            if pairs:
                INTERACTION_PAIRS_DROPPED.labels(reason).inc(pairs)
        await self._buffer.trim(batches[-1].entry_id)
        return sum(len(batch.events) for batch in batches)

    async def flush_through(self) -> None:
        """Flush until every batch buffered before this call is applied (by this process or
        another): what an erasure waits for before it deletes its user."""
        newest = await self._buffer.newest()
        while newest:
            stop_if_asked()
            checkpoint = await self._store.interactions_checkpoint()
            if _entry(checkpoint) >= _entry(newest):
                return
            if not await self.flush() and await self._store.interactions_checkpoint() == checkpoint:
                return  # nothing left after the checkpoint (the buffer lost it)

    async def flush_all(self) -> int:
        """Flush until the buffer is empty (tests, the CLI)."""
        total = 0
        while flushed := await self.flush():
            total += flushed
        return total


def _entry(entry_id: str) -> tuple[int, int]:
    """A stream entry id ('ms-seq') as a comparable pair; '' is before every entry."""
    ms, _, seq = entry_id.partition("-")
    return (int(ms), int(seq or 0)) if ms else (-1, -1)
