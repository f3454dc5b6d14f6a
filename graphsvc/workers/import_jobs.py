"""Imports in the background: an import's rows applied IMPORT_BATCH at a time, then, for an
import that overwrites, the user's entries of that kind it does not hold removed; durable across
restarts.

One job per import (``user|import``), queued in Redis (``{feed}:imports``) and run as every
fan-out job is (``concurrency/jobs.py``): by a worker, under a lease. Its place is kept in the
import's record, written whole after each step (``adapters/redis/imports.py``), so a step that
ran and was not recorded runs again: every write it makes is idempotent (a follow, block or mute
made already is reported, a member added already stays), and its results are recorded once.
"""

from __future__ import annotations

from graphsvc.adapters.redis.imports import ImportRecords
from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.portable import ImportRecord, Mode
from graphsvc.services.portable.applying import Applier
from graphsvc.settings import PortableSettings, TimelineSettings, WorkerSettings
from graphsvc.workers.queued_jobs import QueuedJobs


class ImportJobs(QueuedJobs):
    """Imports as a kind of durable job (``concurrency/jobs.py``)."""

    name = "imports"
    what = "the imports' job queue"

    def __init__(
        self,
        records: ImportRecords,
        applier: Applier,
        queue: JobQueue,
        jobs: Jobs,
        settings: PortableSettings,
        timelines: TimelineSettings,
        worker: WorkerSettings,
    ) -> None:
        super().__init__(queue, jobs, timelines.timeline_job_lease_seconds, worker)
        self._records = records
        self._applier = applier
        self._batch = settings.import_batch

    async def start(self, user_id: str, import_id: str) -> None:
        await self._start(f"{user_id}|{import_id}")

    async def run(self, key: str, progress: Progress) -> None:
        await self._queue.hold(key, self.lease_seconds)
        user_id, _, import_id = key.partition("|")
        record = await self._records.record(user_id, import_id)
        if record is not None and record.state != "done":
            await self._apply(user_id, record, progress)
        await self._queue.finish(key)

    async def _apply(self, user_id: str, record: ImportRecord, progress: Progress) -> None:
        entries = await self._records.entries(user_id, record.id)
        record.state = "running"
        while record.position < len(entries):
            batch = entries[record.position : record.position + self._batch]
            refused = await self._applier.apply(user_id, record.kind, batch)
            record.refused += refused
            record.applied += len(batch) - len(refused)
            record.done += len(batch)
            record.position += len(batch)
            progress.add("rows", len(batch))
            await self._records.save(user_id, record)
            await self._queue.hold(f"{user_id}|{record.id}", self.lease_seconds)
        if record.mode is Mode.OVERWRITE:
            listed = {(entry.list_name, entry.account) for _, entry in entries}
            while removed := await self._applier.remove_unlisted(
                user_id, record.kind, listed, self._batch
            ):
                record.removed += removed
                progress.add("removed", removed)
                await self._records.save(user_id, record)
        record.state = "done"
        await self._records.save(user_id, record)
