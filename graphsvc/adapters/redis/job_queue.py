"""Redis adapter: the durable queues of the fan-out jobs (timelines', bells'), in the
``{feed}`` slot."""

from __future__ import annotations

import time
from collections.abc import Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.timelines import timeline_key
from graphsvc.settings import RedisSettings


class JobQueue:
    """A durable queue of one kind of fan-out job: job -> when it is due (a running job holds
    it a lease's length ahead), and each job's position in its walk of users. Who runs a job
    is its lease's (``leases.py``); the score only keeps running jobs out of the claims.
    Every queue wakes the workers through one list, so a worker waiting for any kind of job
    is woken by each."""

    def __init__(self, client: Client, settings: RedisSettings, name: str = "job") -> None:
        self._redis = client
        self._jobs = timeline_key(settings, f"{name}s")
        self._jobpos = timeline_key(settings, f"{name}pos")
        self._wake = timeline_key(settings, "wake")

    async def enqueue(self, job: str, *, hold: float | None) -> bool:
        """Queue a job; False if already queued. ``hold``: the caller runs it now, so it is
        due only that many seconds from now; else it is due at once, and a waiting worker is
        woken."""
        if hold is not None:
            return bool(await self._redis.zadd(self._jobs, {job: time.time() + hold}, nx=True))
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zadd(self._jobs, {job: time.time()}, nx=True)
            pipe.lpush(self._wake, 1)  # a waiting worker claims it now, not at its next poll
            pipe.ltrim(self._wake, 0, 0)
            added, _, _ = await pipe.execute()
        return bool(added)

    async def wait(self, seconds: float) -> None:
        """Until a job is queued for the workers, or ``seconds`` have passed."""
        await self._redis.blpop([self._wake], timeout=seconds)

    async def depth(self) -> int:
        """Jobs queued or running."""
        return await self._redis.zcard(self._jobs)

    @staticmethod
    async def depths(queues: Sequence[JobQueue]) -> list[int]:
        """``depth`` of each queue, in one round trip (they share the ``{feed}`` slot)."""
        async with queues[0]._redis.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.zcard(queue._jobs)
            return list(await pipe.execute())

    async def due(self, count: int) -> list[str]:
        """The oldest ``count`` jobs due now: queued, or left by a process that stopped."""
        return await self._redis.zrange(
            self._jobs, "-inf", time.time(), byscore=True, offset=0, num=count
        )

    async def hold(self, job: str, seconds: float) -> None:
        """The job is due again only ``seconds`` from now (it runs), if it is queued."""
        await self._redis.zadd(self._jobs, {job: time.time() + seconds}, xx=True)

    async def queued_among(self, jobs: Sequence[str]) -> list[str]:
        """Which of these jobs are queued or running."""
        if not jobs:
            return []
        scores = await self._redis.zmscore(self._jobs, list(jobs))
        return [job for job, score in zip(jobs, scores, strict=True) if score is not None]

    async def position(self, job: str) -> str | None:
        return await self._redis.hget(self._jobpos, job)

    async def advance(self, job: str, position: str, seconds: float) -> None:
        """A step of the job is done: its position saved and its hold renewed, together."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(self._jobpos, job, position)
            pipe.zadd(self._jobs, {job: time.time() + seconds}, xx=True)
            await pipe.execute()

    async def finish(self, job: str) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zrem(self._jobs, job)
            pipe.hdel(self._jobpos, job)
            await pipe.execute()
