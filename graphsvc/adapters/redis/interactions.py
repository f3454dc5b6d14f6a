"""The write-behind buffer of interactions: ``<prefix>ix``, a Redis stream.

Interactions arrive far more often than follows. An accepted batch is one entry of the stream
(appended with AOF on, so it survives a restart of the service); a flusher aggregates entries
per pair and writes them to Neo4j, which records the last entry applied in the same
transaction (exactly once), and then trims the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from graphsvc.adapters.redis.client import Client
from graphsvc.domain.affinity import WeightedInteraction
from graphsvc.settings import RedisSettings


@dataclass(frozen=True, slots=True)
class BufferedBatch:
    entry_id: str
    events: list[WeightedInteraction]
    capped: bool = True  # False: appended by a loader (no daily cap)

    @property
    def accepted_ms(self) -> int:
        """When the batch was appended (Redis's clock, milliseconds): its entry id's time."""
        return int(self.entry_id.partition("-")[0])


class InteractionBuffer:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self._stream = f"{settings.redis_prefix}ix"

    async def append(self, events: Sequence[WeightedInteraction], *, capped: bool = True) -> str:
        """Buffer one accepted batch; returns its entry id. Once this returns, the batch is
        in Redis (and its append-only file). ``capped``: the daily cap of a pair applies
        (False for the loaders' history)."""
        fields = {"e": orjson.dumps(events)} | ({} if capped else {"c": "0"})
        return await self._redis.xadd(self._stream, fields)

    async def newest(self) -> str:
        """The id of the newest entry ('' when the stream is empty or absent)."""
        entries = await self._redis.xrevrange(self._stream, count=1)
        return entries[0][0] if entries else ""

    async def read_after(self, last: str, count: int) -> list[BufferedBatch]:
        """Up to ``count`` batches after entry ``last`` ('' for the first)."""
        start = f"({last}" if last else "-"
        entries = await self._redis.xrange(self._stream, min=start, count=count)
        return [
            BufferedBatch(
                entry_id, [tuple(e) for e in orjson.loads(fields["e"])], fields.get("c") != "0"
            )
            for entry_id, fields in entries
        ]

    async def trim(self, applied: str) -> None:
        """Forget the batches before ``applied`` (they are in Neo4j)."""
        await self._redis.xtrim(self._stream, minid=applied, approximate=False)

    async def backlog(self) -> int:
        return await self._redis.xlen(self._stream)
