"""Redis adapter: the stream of graph events (``graph:events``) that downstream services read.

Delivery is at least once, with an id per event for consumers to drop repeats. A write
creates its event in Neo4j's outbox (``:GraphEvent``) in the transaction of the change; after
the commit the service appends it here together with the mirror write, and notes it as
appended (``<stream>:acked``, same slot). The relay (``workers/relay.py``) later takes outbox
events older than OUTBOX_GRACE_SECONDS: an appended one is just forgotten; one whose append
was lost (Redis down, a crash between the commit and the append) has its users' mirrors
repaired and is appended then.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from redis.exceptions import ResponseError

from graphsvc.adapters.redis.client import Client, Command, queued
from graphsvc.domain.model import GraphEvent
from graphsvc.settings import EventSettings

# Deletes the relay's lease, or extends it (ARGV[2] ms), only if this holder still holds it.
_LEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""


class EventStream:
    def __init__(self, client: Client, settings: EventSettings) -> None:
        self._redis = client
        self.stream = settings.events_stream
        # Braces put the stream's companions in the stream's cluster slot.
        self._acked = f"{{{self.stream}}}:acked"
        self._lease = f"{{{self.stream}}}:relay"
        self._max_len = settings.events_max_len
        self._lease_script = client.register_script(_LEASE)

    def appends(self, events: Sequence[GraphEvent]) -> list[Command]:
        """The appends (and their acks), for the caller to send. A private event (a mute) is
        acked and never appended: the stream is public."""
        commands: list[Command] = [
            ("XADD", self.stream, "MAXLEN", "~", self._max_len, "*", *_flat(event.fields()))
            for event in events
            if not event.private
        ]
        if events:
            now = time.time()
            commands.append(("ZADD", self._acked, *(x for e in events for x in (now, e.id))))
        return commands

    async def append(self, events: Sequence[GraphEvent]) -> None:
        if not events:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            queued(self.appends(events))(pipe)
            await pipe.execute()

    async def acked_among(self, ids: Sequence[str]) -> set[str]:
        scores = await self._redis.zmscore(self._acked, list(ids))
        return {event_id for event_id, score in zip(ids, scores, strict=True) if score is not None}

    async def unack(self, ids: Sequence[str]) -> None:
        """Let the relay treat these events as lost (their mirror write failed)."""
        if ids:
            await self._redis.zrem(self._acked, *ids)

    async def forget_acked(self, ids: Sequence[str], older_than: float) -> None:
        """Drop these acks, and any ack older than ``older_than`` seconds (a relay that died
        between deleting outbox events and their acks leaves those behind)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            if ids:
                pipe.zrem(self._acked, *ids)
            pipe.zremrangebyscore(self._acked, "-inf", time.time() - older_than)
            await pipe.execute()

    async def take_lease(self, holder: str, seconds: float) -> bool:
        """One relay at a time across processes (another may hold it; it expires on its own)."""
        return bool(await self._redis.set(self._lease, holder, nx=True, px=int(seconds * 1000)))

    async def renew_lease(self, holder: str, seconds: float) -> bool:
        """Extend the lease; False when it expired and another process may hold it now."""
        return bool(
            await self._lease_script(keys=[self._lease], args=[holder, int(seconds * 1000)])
        )

    async def release_lease(self, holder: str) -> None:
        await self._lease_script(keys=[self._lease], args=[holder, 0])

    async def read(
        self, after: str, count: int, block_ms: int | None = None
    ) -> list[tuple[str, dict[str, str]]]:
        """Entries after entry id ``after`` ("$": only new ones), waiting up to ``block_ms``."""
        reply = await self._redis.xread({self.stream: after}, count=count, block=block_ms)
        return reply[0][1] if reply else []

    async def newest_after(self, after: str, count: int) -> list[tuple[str, dict[str, str]]]:
        """The newest ``count`` entries after entry id ``after``, newest first (a read of at
        most ``count`` entries, however old ``after`` is)."""
        return await self._redis.xrevrange(self.stream, "+", f"({after}", count=count)

    async def last_id(self) -> str:
        entries = await self._redis.xrevrange(self.stream, count=1)
        return entries[0][0] if entries else "0-0"

    # -- consumer groups (at least once: an entry is acked only after it was applied) --------

    async def ensure_group(self, group: str) -> None:
        """Create the consumer group at the stream's end (new events only), once."""
        try:
            await self._redis.xgroup_create(self.stream, group, id="$", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read_group(
        self, group: str, consumer: str, count: int, block_ms: int | None = None
    ) -> list[tuple[str, dict[str, str]]]:
        """Entries never delivered to the group, now delivered to ``consumer``."""
        reply = await self._redis.xreadgroup(
            group, consumer, {self.stream: ">"}, count=count, block=block_ms
        )
        return reply[0][1] if reply else []

    async def claim_stale(
        self, group: str, consumer: str, idle_ms: int, count: int
    ) -> list[tuple[str, dict[str, str]]]:
        """Entries delivered to a consumer that has not acked them for ``idle_ms`` (it
        stopped): delivered to ``consumer`` now."""
        reply = await self._redis.xautoclaim(
            self.stream, group, consumer, idle_ms, "0-0", count=count
        )
        return [(entry_id, fields) for entry_id, fields in reply[1] if fields is not None]

    async def next_batch(
        self, group: str, consumer: str, idle_ms: int, count: int, block_ms: int | None = None
    ) -> list[tuple[str, dict[str, str]]]:
        """A consumer's next batch: entries a stopped consumer left (idle ``idle_ms``), else new
        ones. When the stream or the group went (a flushed Redis), the group is made again at
        the stream's end and the batch is empty."""
        try:
            entries = await self.claim_stale(group, consumer, idle_ms, count)
            return entries or await self.read_group(group, consumer, count, block_ms)
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.ensure_group(group)
            return []

    async def ack(self, group: str, entry_ids: Sequence[str]) -> None:
        if entry_ids:
            await self._redis.xack(self.stream, group, *entry_ids)

    async def pending(self, group: str) -> int:
        """Entries delivered to the group and not acked yet."""
        summary = await self._redis.xpending(self.stream, group)
        return int(summary["pending"])


def _flat(fields: dict[str, Any]) -> list[Any]:
    return [x for item in fields.items() for x in item]
