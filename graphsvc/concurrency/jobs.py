"""The background jobs of one process: timeline fan-outs, status propagations and erasures,
keyed by what they work on.

The durable record of pending work is in the stores (labels :Fanout and :Erasing in Neo4j, the
timeline job queue in Redis), so a job that dies with its process is resumed by another; this
registry only runs jobs, at most ``concurrency`` at once (the others wait their turn), runs a
job again when new work for its key arrives while it runs, and reports progress.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from graphsvc.concurrency.loops import stop_if_asked, stopped
from graphsvc.concurrency.metrics import JOBS_RUNNING

log = logging.getLogger(__name__)


@dataclass
class Progress:
    """What a running job has done so far (edges or users, as the job counts them)."""

    done: int = 0
    notes: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, n: int) -> None:
        self.done += n
        self.notes[what] = self.notes.get(what, 0) + n


JobFactory = Callable[[Progress], Awaitable[None]]
RETRIES = 5  # a failed job runs again after 2, 4, 8, 16, 32 s before it is left for a restart


@dataclass
class _Job:
    task: asyncio.Task[None]
    progress: Progress
    again: bool = False


class Jobs:
    def __init__(self, concurrency: int | None = None) -> None:
        self._jobs: dict[str, _Job] = {}
        self._gave_up: dict[str, JobFactory] = {}
        self._closed = False
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency) if concurrency else None

    def start(self, key: str, factory: JobFactory, *, forget: bool = False) -> None:
        """Run ``factory`` for ``key``; if a job for ``key`` is running, run it once more after.
        ``forget``: drop the job from the registry once done (jobs by the thousand, such as
        timeline fan-outs, whose progress is kept elsewhere)."""
        if self._closed:
            return
        running = self._jobs.get(key)
        if running is not None and not running.task.done():
            running.again = True
            return
        progress = Progress()
        task = asyncio.get_running_loop().create_task(self._run(key, factory, progress), name=key)
        self._jobs[key] = _Job(task, progress)
        if forget:
            task.add_done_callback(lambda done: self._forget(key, done))

    def _forget(self, key: str, task: asyncio.Task[None]) -> None:
        job = self._jobs.get(key)
        if job is not None and job.task is task:
            del self._jobs[key]

    async def _run(self, key: str, factory: JobFactory, progress: Progress) -> None:
        if self._slots is not None:
            await self._slots.acquire()
        JOBS_RUNNING.inc()
        try:
            await self._attempts(key, factory, progress)
        finally:
            JOBS_RUNNING.dec()
            if self._slots is not None:
                self._slots.release()

    async def _attempts(self, key: str, factory: JobFactory, progress: Progress) -> None:
        failures = 0
        while True:
            stop_if_asked()
            try:
                await factory(progress)
            except asyncio.CancelledError:
                raise
            except Exception:
                failures += 1
                if failures > RETRIES:
                    # The work stays marked in Neo4j; `retry_given_up` or a worker resumes it.
                    log.exception(
                        "background job %s failed %d times; left for later", key, failures
                    )
                    self._gave_up[key] = factory
                    return
                log.exception("background job %s failed; retrying", key)
                await asyncio.sleep(min(2**failures, 60))
                continue
            failures = 0
            job = self._jobs.get(key)
            if job is None or not job.again:
                return
            job.again = False

    def retry_given_up(self) -> int:
        """Start again the jobs that failed too often (a store was down for minutes)."""
        gave_up, self._gave_up = self._gave_up, {}
        for key, factory in gave_up.items():
            self.start(key, factory)
        return len(gave_up)

    def progress(self, key: str) -> Progress | None:
        job = self._jobs.get(key)
        return job.progress if job is not None and not job.task.done() else None

    def running(self, prefixes: tuple[str, ...] = ("",)) -> int:
        """Jobs running (or waiting for a slot), of keys starting with one of ``prefixes``."""
        return sum(
            not job.task.done() for key, job in self._jobs.items() if key.startswith(prefixes)
        )

    def free(self) -> int:
        """How many more jobs would start at once (a worker claims no more than this)."""
        if self.concurrency is None:
            return 1_000
        return max(0, self.concurrency - self.running())

    def holds(self, key: str) -> bool:
        job = self._jobs.get(key)
        return job is not None and not job.task.done()

    def done(self) -> int:
        """Work done by every job this process ran (for progress bars)."""
        return sum(job.progress.done for job in self._jobs.values())

    async def drain(self) -> None:
        """Wait until no job runs (tests, the CLI)."""
        while tasks := [job.task for job in self._jobs.values() if not job.task.done()]:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Stop every job (shutdown); a worker resumes the unfinished ones."""
        self._closed = True
        await stopped(job.task for job in self._jobs.values())
