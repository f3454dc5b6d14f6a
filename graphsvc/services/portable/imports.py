"""Imports: a file of follows, blocks, mutes or lists (Mastodon's CSV, or JSON) read at once
(a body that is neither, or holds more than IMPORT_MAX_ROWS rows, is a 422 and changes
nothing), its bad rows refused there and then, and the rest applied in the background by a
durable job (``workers/import_jobs.py``), whose record says how far it got and names each
refused row and why.

An import's id is a digest of the user, the kind, the mode and the body: the same import
sent again (a retry) is the same import, answered with its record, and runs once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

import orjson

from graphsvc.adapters.redis.imports import ImportRecords
from graphsvc.domain.errors import ImportNotFound, InvalidImport
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.portable import ImportRecord, Kind, Mode, csv_rows, parse
from graphsvc.settings import PortableSettings


class ImportStarter(Protocol):
    async def ensure_room(self) -> None: ...

    async def start(self, user_id: str, import_id: str) -> None: ...


class Imports:
    def __init__(
        self, records: ImportRecords, jobs: ImportStarter, settings: PortableSettings
    ) -> None:
        self._records = records
        self._jobs = jobs
        self._settings = settings

    async def submit(
        self, user_id: str, kind: Kind, mode: Mode, body: bytes, media_type: str
    ) -> tuple[ImportRecord, bool]:
        """The import's record, and whether it is new (False: the same import again)."""
        validate_user_id(user_id)
        rows = self._rows(kind, body, media_type)
        parsed = parse(kind, rows, self._settings.account_domain)
        digest = hashlib.sha256(f"{user_id}|{kind}|{mode}|".encode() + body).hexdigest()[:20]
        record = ImportRecord(digest, kind, mode, len(rows), refused=parsed.refused)
        record.done = len(parsed.refused)
        await self._jobs.ensure_room()
        created = await self._records.create(user_id, record, parsed.entries)
        if not created:
            record = await self.status(user_id, digest)
        if record.state != "done":  # new, or a retry of one whose job was lost: (re)start it
            await self._jobs.start(user_id, digest)
        return record, created

    async def status(self, user_id: str, import_id: str) -> ImportRecord:
        validate_user_id(user_id)
        record = await self._records.record(user_id, import_id)
        if record is None:
            raise ImportNotFound(f"user {user_id!r} has no import {import_id!r} (or it expired)")
        return record

    def _rows(self, kind: Kind, body: bytes, media_type: str) -> Sequence[tuple[int, Any]]:
        most = self._settings.import_max_rows
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidImport("the import is not UTF-8 text") from exc
        if media_type == "application/json":
            try:
                items = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                raise InvalidImport(f"the import is not JSON: {exc}") from exc
            if not isinstance(items, list):
                raise InvalidImport("a JSON import is an array of rows")
            odd = next((n for n, item in enumerate(items, 1) if not isinstance(item, dict)), None)
            if odd is not None:
                raise InvalidImport(f"row {odd} of the JSON import is no object")
            rows: Sequence[tuple[int, Any]] = list(enumerate(items, start=1))
        else:
            rows = csv_rows(kind, text)
        if not rows:
            raise InvalidImport("the import holds no rows")
        if len(rows) > most:
            raise InvalidImport(f"the import holds {len(rows)} rows; IMPORT_MAX_ROWS is {most}")
        return rows
