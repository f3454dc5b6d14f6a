"""Redis adapter: which lists hold an author, so that its posts' fan-out pushes into their
timelines (``la:{a}``, a set of list ids in the author's slot).

The set is an index for the fan-out only, never an answer: a list read filters its timeline by
its members as Neo4j holds them, so an entry left behind (a removal whose Redis write was lost,
a deleted list) costs a push nobody reads. A list registers every member again when its
timeline is rebuilt, so a flushed Redis heals on the list's next read.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.mirror import Mirror


class ListHolders:
    def __init__(self, client: Client, mirror: Mirror) -> None:
        self._redis = client
        self._mirror = mirror

    def key(self, author: str) -> str:
        return self._mirror.key("la", author)  # the author's slot, as its mirror keys

    async def add(self, list_id: str, members: Sequence[str]) -> None:
        await self._change(list_id, members, add=True)

    async def remove(self, list_id: str, members: Sequence[str]) -> None:
        await self._change(list_id, members, add=False)

    async def _change(self, list_id: str, members: Sequence[str], *, add: bool) -> None:
        if not members:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for member in members:
                (pipe.sadd if add else pipe.srem)(self.key(member), list_id)
            await pipe.execute()

    async def of(self, author: str) -> list[str]:
        return sorted(await self._redis.smembers(self.key(author)))

    async def forget(self, author: str) -> None:
        """An erased user's index goes (the next user with the id is in no list)."""
        await self._redis.unlink(self.key(author))
