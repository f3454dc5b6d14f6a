"""Durable background jobs: one mechanism for every kind of long work.

A job kind keeps the record of its unfinished work in a store, so that work outlives the
process that started it: timeline jobs are queued in Redis, moderation jobs are marks in
Neo4j. A kind says which of its jobs are due (``JobKind.due``) and runs one job
(``JobKind.run``), saving its own position as it goes, so that a run that stops is resumed
from there and a step run twice changes nothing. Everything else is the runner's (``Jobs``),
the same for every kind:

- **Leases.** A job runs only under its lease (``LeaseStore``: one holder across processes).
  The runner renews it every round while the job runs, and cancels the job if it cannot (it
  was taken over, or the store did not answer before it ran out), since another process may
  run it then. A process that stops stops renewing: once its leases run out, another claims
  the jobs and resumes them from their records.
- **Bounds.** At most ``concurrency`` jobs run at once (the others wait their turn), a kind
  runs at most ``JobKind.most`` of them, and a claim takes no more than there is room for:
  a burst of work waits in its store, not in memory.
- **Progress.** What a running job has done (``Progress``) is noted beside its lease every
  round, so any process can report it (``GET .../status``).
- **Failures.** A failed run is retried a few times (``retries.failed_jobs``); then its
  lease is left to run out, and the next claim, in any process, runs it again.
- **Where.** A serving process (``here=False``) only records work: the workers claim it. Every
  other process (the worker, the CLI, tests) runs the jobs it starts at once, under a lease.

After a run ends, its lease is kept for two more rounds rather than dropped, so a process
that listed the due jobs before the job finished does not start the finished job again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from graphsvc.concurrency.loops import stop_if_asked, stopped
from graphsvc.concurrency.metrics import JOBS_RUNNING
from graphsvc.concurrency.retries import failed_jobs

log = logging.getLogger(__name__)

KEPT_MAX = 10_000  # leases kept after a run, remembered for a start of the same job


@dataclass
class Progress:
    """What a running job has done so far (edges or users, as the job counts them)."""

    done: int = 0
    notes: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, n: int) -> None:
        self.done += n
        self.notes[what] = self.notes.get(what, 0) + n


class JobKind(Protocol):
    """A kind of durable job. Its keys name the work (and its lease) in every process."""

    name: str
    lease_seconds: float  # how long a stopped holder keeps its jobs from the others
    most: int  # jobs of this kind one process claims at most at once

    async def due(self, limit: int) -> Sequence[str]:
        """Keys of recorded, unfinished jobs; at least ``limit`` of them when there are."""
        ...

    async def run(self, key: str, progress: Progress) -> None:
        """Do the job's work from its saved position, and forget its record once done."""
        ...


@dataclass(frozen=True, slots=True)
class Recorded:
    """A kind as a serving process knows it: by name alone. Such a process records its jobs
    and never runs one (``Jobs(here=False)``), so it builds none of the kind's stores or loops;
    the workers, which run them, build the kind itself."""

    name: str
    lease_seconds: float = 0.0
    most: int = 0

    async def due(self, limit: int) -> Sequence[str]:
        return ()

    async def run(self, key: str, progress: Progress) -> None:
        raise RuntimeError(f"{self.name} jobs run in the workers, not in a serving process")


class LeaseStore(Protocol):
    """Who runs a job now, across processes (``adapters/redis/leases.py``)."""

    async def take(self, name: str, seconds: float) -> str | None: ...

    async def renew(self, name: str, token: str, seconds: float) -> bool: ...

    async def note(self, name: str, notes: dict[str, int], seconds: float) -> None: ...

    async def notes(self, name: str) -> dict[str, int] | None: ...


@dataclass
class _Job:
    kind: JobKind
    key: str
    token: str
    progress: Progress = field(default_factory=Progress)
    task: asyncio.Task[None] | None = None
    again: bool = False


class Jobs:
    """The runner of every kind's jobs in one process."""

    def __init__(
        self, leases: LeaseStore, *, concurrency: int, round_seconds: float, here: bool
    ) -> None:
        self.here = here
        self._leases = leases
        self._concurrency = concurrency
        self._round = round_seconds
        self._slots = asyncio.Semaphore(concurrency)
        self._jobs: dict[str, _Job] = {}
        self._kept: dict[str, str] = {}  # the leases kept after a run ended, by job
        self._closed = False

    async def start(self, kind: JobKind, key: str) -> None:
        """Run a job whose record was just written, here if this process runs its own work;
        once more after the current run if it runs here already; left to its holder if
        another process holds its lease."""
        if not self.here or self._closed:
            return
        running = self._jobs.get(key)
        if running is not None and running.task is not None and not running.task.done():
            running.again = True
            return
        try:
            token = await self._lease(kind, key)
        except Exception as exc:  # the record stays: a claim runs the job once it answers
            log.warning("cannot lease job %s (%s); left for a worker", key, exc)
            return
        if token is not None:
            self._launch(_Job(kind, key, token))

    async def _lease(self, kind: JobKind, key: str) -> str | None:
        """The job's lease: the one this process kept after the job's last run (new work
        arrived since), else a free one; None when another process holds it."""
        kept = self._kept.pop(key, None)
        if kept is not None and await self._leases.renew(key, kept, kind.lease_seconds):
            return kept
        return await self._leases.take(key, kind.lease_seconds)

    async def claim(self, kinds: Iterable[JobKind]) -> list[str]:
        """Lease and start the due jobs this process has room for; their keys."""
        started: list[str] = []
        for kind in kinds:
            room = min(kind.most - self.running(kind.name), self.free())
            if room <= 0:
                continue
            taken = 0
            for key in await kind.due(room + self.running(kind.name)):
                if taken >= room:
                    break
                if key in self._jobs:
                    continue
                token = await self._leases.take(key, kind.lease_seconds)
                if token is not None:  # else another process runs it
                    self._launch(_Job(kind, key, token))
                    started.append(key)
                    taken += 1
        return started

    def _launch(self, job: _Job) -> None:
        self._jobs[job.key] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job), name=job.key)
        job.task.add_done_callback(lambda _: self._forget(job))

    def _keep(self, key: str, token: str) -> None:
        if len(self._kept) >= KEPT_MAX:  # the oldest have run out by now
            del self._kept[next(iter(self._kept))]
        self._kept[key] = token

    def _forget(self, job: _Job) -> None:
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]

    async def _run(self, job: _Job) -> None:
        renewing = asyncio.get_running_loop().create_task(self._renew(job))
        keep = job.kind.lease_seconds  # a failure keeps it whole, then a claim retries
        try:
            async with self._slots:
                JOBS_RUNNING.inc()
                try:
                    if await self._attempts(job):
                        keep = 2 * self._round + 1
                finally:
                    JOBS_RUNNING.dec()
        except asyncio.CancelledError:  # stopped, or the lease lost: soon someone else's
            keep = 2 * self._round + 1
            raise
        finally:
            renewing.cancel()
            with contextlib.suppress(Exception):  # the lease lapses by itself
                if await self._leases.renew(job.key, job.token, keep):
                    await self._leases.note(job.key, {}, 0)
                    self._keep(job.key, job.token)

    async def _attempts(self, job: _Job) -> bool:
        """Run the job (again while new work arrived meanwhile); False when it gave up."""

        async def attempt() -> None:
            stop_if_asked()
            await job.kind.run(job.key, job.progress)

        while True:
            try:
                await failed_jobs(job.key)(attempt)
            except Exception:
                log.exception("job %s failed on every retry; left for a claim", job.key)
                return False
            if not job.again:
                return True
            job.again = False

    async def _renew(self, job: _Job) -> None:
        """Note the job's progress every round, renew its lease once a third of it is used,
        and cancel the job when the lease cannot be confirmed before it runs out."""
        seconds = job.kind.lease_seconds
        every = min(self._round, seconds / 3)
        clock = asyncio.get_running_loop().time
        renewed = clock()
        while clock() - renewed < seconds:
            await asyncio.sleep(every)
            try:
                await self._leases.note(job.key, dict(job.progress.notes), seconds)
                if clock() - renewed < seconds / 3:
                    continue
                if not await self._leases.renew(job.key, job.token, seconds):
                    break
                renewed = clock()
            except Exception as exc:  # the store is down: the lease runs out unless it answers
                log.warning("cannot renew the lease of %s (%s)", job.key, exc)
            stop_if_asked()  # a cancel a store call turned into its own error still stops it
        log.warning("lost the lease of %s; stopping the job for its new holder", job.key)
        assert job.task is not None
        job.task.cancel()

    async def progress(self, key: str) -> dict[str, int] | None:
        """What the job ``key`` has done so far: from this process when it runs it, else as
        its holder last noted it."""
        job = self._jobs.get(key)
        if job is not None:
            return dict(job.progress.notes)
        return await self._leases.notes(key)

    def running(self, kind: str | None = None) -> int:
        """Jobs running here (or waiting for a slot), of one kind or of all."""
        return sum(kind is None or job.kind.name == kind for job in self._jobs.values())

    def free(self) -> int:
        """How many more jobs would run at once (a claim takes no more than this)."""
        return max(0, self._concurrency - self.running())

    async def drain(self) -> None:
        """Wait until no job runs here (tests, the CLI)."""
        while tasks := [job.task for job in self._jobs.values() if job.task is not None]:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Stop every job (shutdown); their records let a claim resume them."""
        self._closed = True
        await stopped(job.task for job in self._jobs.values() if job.task is not None)
