"""Redis adapter: each user's imports (``ir:{u}``, a hash import id -> its record as JSON; and
``iw:{u}``, import id -> its entries as JSON), kept IMPORT_KEEP_DAYS after their last change.
A record is written whole after each step of its job, so a step's results are all recorded or
none are (the step runs again: its writes are idempotent)."""

from __future__ import annotations

from dataclasses import asdict

import orjson

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.domain.portable import Entry, ImportRecord


class ImportRecords:
    def __init__(self, client: Client, mirror: Mirror, keep_seconds: int) -> None:
        self._redis = client
        self._mirror = mirror
        self._keep = keep_seconds

    def _keys(self, user_id: str) -> tuple[str, str]:
        return self._mirror.key("ir", user_id), self._mirror.key("iw", user_id)

    async def create(
        self, user_id: str, record: ImportRecord, entries: list[tuple[int, Entry]]
    ) -> bool:
        """Store a new import; False when one with this id exists (a retried import)."""
        records, rows = self._keys(user_id)
        stored = orjson.dumps([[n, asdict(e)] for n, e in entries])
        async with self._redis.pipeline(transaction=True) as pipe:  # one slot: one step
            pipe.hsetnx(records, record.id, orjson.dumps(record.as_dict()))
            pipe.hsetnx(rows, record.id, stored)
            pipe.expire(records, self._keep)
            pipe.expire(rows, self._keep)
            created, *_ = await pipe.execute()
        return bool(created)

    async def record(self, user_id: str, import_id: str) -> ImportRecord | None:
        raw = await self._redis.hget(self._keys(user_id)[0], import_id)
        return ImportRecord.of(orjson.loads(raw)) if raw else None

    async def entries(self, user_id: str, import_id: str) -> list[tuple[int, Entry]]:
        raw = await self._redis.hget(self._keys(user_id)[1], import_id)
        return [
            (n, Entry(**{**e, "languages": tuple(e["languages"])}))
            for n, e in orjson.loads(raw or b"[]")
        ]

    async def save(self, user_id: str, record: ImportRecord) -> None:
        records, rows = self._keys(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(records, record.id, orjson.dumps(record.as_dict()))
            pipe.expire(records, self._keep)
            pipe.expire(rows, self._keep)
            await pipe.execute()
