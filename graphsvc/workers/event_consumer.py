"""A consumer of one consumer group on the event stream (``graph:events``), the shape every
event consumer of the worker shares.

Delivery is at least once: a batch is acked only after it was applied, and the entries a
consumer that stopped acking held are claimed by another after CLAIM_IDLE_MS. So what a
consumer does with an event must be idempotent, and must not trust the order of one edge's
events (the relay appends lost ones late).
"""

from __future__ import annotations

import os
import uuid

from graphsvc.adapters.redis.event_stream import EventStream

BATCH = 500  # stream entries read per round
CLAIM_IDLE_MS = 30_000  # entries a stopped consumer held are claimed after this long


class EventConsumer:
    """Subclasses say what a batch of events does (``apply``)."""

    def __init__(self, stream: EventStream, group: str) -> None:
        self._stream = stream
        self._group = group
        self.consumer = f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    async def prepare(self) -> None:
        """The consumer group exists (created at the stream's end: new events only)."""
        await self._stream.ensure_group(self._group)

    async def consume(self, block_ms: int | None = None) -> int:
        """Apply and ack one batch: entries a stopped consumer left, then new ones. Returns
        how many entries were applied."""
        entries = await self._stream.next_batch(
            self._group, self.consumer, CLAIM_IDLE_MS, BATCH, block_ms
        )
        if not entries:
            return 0
        await self.apply([fields for _, fields in entries])
        await self._stream.ack(self._group, [entry_id for entry_id, _ in entries])
        return len(entries)

    async def round(self) -> bool:
        """A round of the consumer's loop: one batch, waited for at most a second; True when
        the batch was full (more is waiting)."""
        return await self.consume(block_ms=1_000) == BATCH

    async def apply(self, events: list[dict[str, str]]) -> None:
        raise NotImplementedError
