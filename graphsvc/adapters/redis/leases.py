"""Leases: which worker process runs a job now, so several workers never run one job at once.

A lease is a key holding its holder's random token, with an expiry the holder renews while it
works. A worker that stops (killed, partitioned) stops renewing; once its lease runs out,
another worker takes the job over and resumes it from its durable record. Renewing checks the
token in the same script, so a holder that lost its lease cannot extend the next holder's.

Beside its lease, a job's holder keeps its progress notes (what it has done so far, by kind),
so a serving process can report the progress of a job another process runs.

A mark is a lease that several may hold at once (a graph load running, while another runs):
a sorted set of its holders, each scored with the moment its hold runs out, which it renews
while it works and clears at its end. It is held while one holder's hold has not run out;
a holder that stopped drops out once its hold has (by the clocks of the processes that hold
and ask, which the hold's length makes up for).
"""

from __future__ import annotations

import time
import uuid

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.scripts import register
from graphsvc.settings import RedisSettings


class Leases:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self._prefix = f"{settings.redis_prefix}lease:"
        self._script = register(client, "lease")

    def _key(self, name: str) -> str:
        return f"{self._prefix}{{{name}}}"

    async def take(self, name: str, seconds: float) -> str | None:
        """The lease's token when it was free (now the caller's), else None."""
        token = uuid.uuid4().hex
        taken = await self._redis.set(self._key(name), token, nx=True, px=int(seconds * 1000))
        return token if taken else None

    async def renew(self, name: str, token: str, seconds: float) -> bool:
        """The lease lasts ``seconds`` from now; False when it had run out (someone else may
        hold it)."""
        ms = max(1, int(seconds * 1000))
        return bool(await self._script(keys=[self._key(name)], args=[token, ms]))

    async def release(self, name: str, token: str) -> None:
        """Give the lease up now, if the caller still holds it (PEXPIRE 0 deletes the key)."""
        await self._script(keys=[self._key(name)], args=[token, 0])

    async def note(self, name: str, notes: dict[str, int], seconds: float) -> None:
        """Record the progress of the job ``name``; the notes lapse ``seconds`` after the
        last one (a job that ended or died stops reporting)."""
        key = f"{self._key(name)}:notes"
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.delete(key)
            if notes:
                pipe.hset(key, mapping=notes)
                pipe.pexpire(key, max(1, int(seconds * 1000)))
            await pipe.execute()

    async def notes(self, name: str) -> dict[str, int] | None:
        """The last progress a running job ``name`` recorded, if any."""
        found = await self._redis.hgetall(f"{self._key(name)}:notes")
        return {k: int(v) for k, v in found.items()} or None

    async def hold(self, name: str, holder: str, seconds: float) -> None:
        """``holder`` holds the mark ``name`` for ``seconds`` from now (renewed, if it held
        it); the mark's key lasts as long as its newest hold, so a hold is never cut short
        while every holder holds for the same ``seconds``."""
        key, now = self._marks(name), time.time()
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", now)  # the holds that ran out
            pipe.zadd(key, {holder: now + seconds})
            pipe.pexpire(key, max(1, int(seconds * 1000)))
            await pipe.execute()

    async def let_go(self, name: str, holder: str) -> None:
        """``holder`` no longer holds the mark ``name`` (the others still do)."""
        await self._redis.zrem(self._marks(name), holder)

    async def held(self, name: str) -> bool:
        """Whether someone holds the mark ``name`` now."""
        return bool(await self._redis.zcount(self._marks(name), time.time(), "+inf"))

    def _marks(self, name: str) -> str:
        return f"{self._key(name)}:holders"
