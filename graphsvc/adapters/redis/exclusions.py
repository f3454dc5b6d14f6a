"""Redis adapter: the members of each reader's exclusive lists, whose posts leave its home
timeline (``xl:{r}``, a set in the reader's slot, ``''`` marking it built; ``xv:{r}`` its
version, moved by every change of the reader's lists).

A cache of what Neo4j holds, kept TIMELINE_CACHE_SECONDS at most: a change of a list
invalidates it (the version moves and the set goes), and a build stores its snapshot only when
the version is the one it read first (``exclusions_install.lua``), so a build that raced a
change never stores the older answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register


class ExclusionCache:
    def __init__(self, client: Client, mirror: Mirror, keep_seconds: int) -> None:
        self._redis = client
        self._mirror = mirror
        self._keep = keep_seconds
        self._install = register(client, "exclusions_install")

    def _keys(self, reader: str) -> list[str]:
        return [self._mirror.key("xl", reader), self._mirror.key("xv", reader)]

    async def among(self, reader: str, authors: Sequence[str]) -> set[str] | None:
        """Which of the authors the reader's exclusive lists hold; None when not cached."""
        flags = await self._redis.smismember(self._keys(reader)[0], ["", *authors])
        if not flags[0]:
            return None
        return {a for a, flag in zip(authors, flags[1:], strict=True) if flag}

    async def version(self, reader: str) -> str:
        return await self._redis.get(self._keys(reader)[1]) or "0"

    async def install(self, reader: str, version: str, members: Sequence[str]) -> bool:
        args = [version, self._keep, *members]
        return bool(await self._install(keys=self._keys(reader), args=args))

    async def invalidate(self, reader: str) -> None:
        xl, xv = self._keys(reader)
        async with self._redis.pipeline(transaction=True) as pipe:  # one slot: one step
            pipe.incr(xv)
            pipe.delete(xl)
            await pipe.execute()

    async def forget(self, reader: str) -> None:
        """An erased user's exclusions go."""
        await self._redis.unlink(*self._keys(reader))
