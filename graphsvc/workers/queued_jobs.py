"""What every kind of durable job kept in a Redis job queue (``adapters/redis/job_queue.py``)
shares: the queue's bound, the start of a job (queued, then run here or left to a worker), and
the due jobs a worker claims. The timelines' fan-outs, the bells and the imports are such
kinds; each adds how it runs a job (``concurrency/jobs.py``)."""

from __future__ import annotations

from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.errors import QueueFull
from graphsvc.settings import WorkerSettings


class QueuedJobs:
    name: str
    what: str  # the queue as a refusal names it

    def __init__(
        self, queue: JobQueue, jobs: Jobs, lease_seconds: float, worker: WorkerSettings
    ) -> None:
        self._queue = queue
        self._jobs = jobs
        self.lease_seconds = lease_seconds
        self.most = worker.worker_jobs
        self._queue_max = worker.worker_queue_max

    async def ensure_room(self, *alongside: QueuedJobs) -> None:
        """Refuse new work while the queue, or one of the queues ``alongside`` that the same
        work may add to, is full (the caller has changed nothing yet); one round trip."""
        kinds = [self, *alongside]
        depths = await JobQueue.depths([kind._queue for kind in kinds])
        for kind, depth in zip(kinds, depths, strict=True):
            if depth >= kind._queue_max:
                raise QueueFull(
                    f"{kind.what} holds WORKER_QUEUE_MAX ({kind._queue_max}) jobs; retry once "
                    "workers catch up",
                    headers={"Retry-After": "5"},
                )

    async def _start(self, job: str) -> None:
        """Queue the job, and run it here when this process runs its own background work;
        else wake a waiting worker. A job already queued is left to its holder."""
        here = self._jobs.here
        if await self._queue.enqueue(job, hold=self.lease_seconds if here else None):
            await self._jobs.start(self, job)

    async def due(self, limit: int) -> list[str]:
        return await self._queue.due(limit)

    async def run(self, key: str, progress: Progress) -> None:
        raise NotImplementedError
