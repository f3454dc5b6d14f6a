"""Redis adapter: the mirror of each user's mutes, ``<prefix>mu:{u}`` (the slot of the user's
mirror keys), which timeline reads and new-follower notifications are filtered by.

A hash: muted user -> ``version|until|n``, a removal -> ``version|-``, and the field ``""`` ->
the version of the Neo4j snapshot it was built from. Without that field the hash is not built
(a new user, a flushed Redis): a reader builds it from Neo4j first and never filters by a
hash that may have forgotten a mute (``MutesMissing``). Writes and builds are versioned by
the muter's clock (``lua/mute.lua``, ``lua/mute_install.lua``), so neither a late write nor a
slow build undoes a newer one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsvc.adapters.redis.client import Batch, Client, Command, is_cluster, queued
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register
from graphsvc.domain.mutes import MirroredMute, MuteChange

BUILT = ""  # the field holding the snapshot's version: no user id is empty


class MutesMissing(Exception):
    """The user's mute hash is not built: build it from Neo4j, then ask again."""


class MuteMirror:
    def __init__(self, client: Client, mirror: Mirror) -> None:
        self._redis = client
        self._mirror = mirror
        self._cluster = is_cluster(client)
        self._apply = register(client, "mute")
        self._install = register(client, "mute_install")

    def key(self, user_id: str) -> str:
        return self._mirror.key("mu", user_id)

    async def apply(
        self,
        changes: Sequence[MuteChange],
        *,
        alongside: Sequence[Command],
        after: Sequence[Command],
    ) -> None:
        """Mirror committed mute writes, with ``alongside`` in the same round trip and
        ``after`` only once the writes are done (on a single Redis the same pipeline, which
        runs in order; on a cluster a second round trip), as ``Mirror.apply_many`` does."""
        batch = Batch(self._redis)
        for change in changes:
            args = [change.target, change.version, change.encoded()]
            batch.script(self._apply, [self.key(change.muter)], args)
        batch.call(queued(alongside))
        if not self._cluster:
            batch.call(queued(after))
        await batch.execute()
        if self._cluster:
            second = Batch(self._redis)
            second.call(queued(after))
            await second.execute()

    async def install(self, user_id: str, version: int, entries: dict[str, str]) -> bool:
        """Build the user's hash from a snapshot read at ``version``; False when a newer
        snapshot was installed meanwhile."""
        args: list[Any] = [version]
        for target, entry in entries.items():
            args += (target, entry)
        return bool(await self._install(keys=[self.key(user_id)], args=args))

    async def muted_among(
        self, user_id: str, others: Sequence[str], now_us: int, *, notifications: bool = False
    ) -> set[str]:
        """Which of ``others`` the user mutes at ``now_us`` (``notifications``: only those
        whose notifications it mutes too); ``MutesMissing`` when the hash is not built."""
        fields = list(dict.fromkeys(others))
        values = await self._redis.hmget(self.key(user_id), [BUILT, *fields])
        if values[0] is None:
            raise MutesMissing(user_id)
        return {
            other
            for other, value in zip(fields, values[1:], strict=True)
            if value is not None
            and MirroredMute.decode(value).in_effect(now_us, notifications=notifications)
        }

    async def dump(self, user_id: str) -> tuple[int, dict[str, MirroredMute]] | None:
        """The whole hash (checks): its snapshot's version and entries; None when not built."""
        raw = await self._redis.hgetall(self.key(user_id))
        built = raw.pop(BUILT, None)
        if built is None:
            return None
        return int(built), {target: MirroredMute.decode(v) for target, v in raw.items()}

    async def forget(self, user_id: str) -> None:
        """An erased user's mutes go (a later user with the same id mutes nobody)."""
        await self._redis.unlink(self.key(user_id))

    async def drop(self, user_ids: Sequence[str]) -> None:
        """Forget these users' hashes, so the next build installs whatever Neo4j says (a
        repair: the hash may hold a version Neo4j never reached)."""
        if user_ids:
            async with self._redis.pipeline(transaction=False) as pipe:
                for user_id in user_ids:
                    # the command itself: a cluster pipeline's unlink() is a coroutine that
                    # splits keys by slot, never queued on the pipeline
                    pipe.execute_command("UNLINK", self.key(user_id))
                await pipe.execute()
