"""The mirror of users' privacy settings: ``<prefix>pv:{privacy}``, each restricted user's
settings in their compact form (a user at the defaults has no field), and
``<prefix>pvv:{privacy}``, each user's settings version.

Both share the ``{privacy}`` hash tag (one cluster slot). The field ``""`` marks the hash as
built: without it (a new or flushed Redis) an absent user cannot be told from a lost one, so
the hash must be rebuilt from Neo4j before any read trusts it; a read never takes a missing
mirror for "public". One HMGET answers a read for any number of owners.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.domain.privacy import DEFAULT_PRIVACY, Privacy
from graphsvc.settings import RedisSettings

BUILT = ""  # the field that marks the settings hash as built


class PrivacyMissing(Exception):
    """The settings hash is not in Redis (new, flushed): build it, then ask again."""


@dataclass(slots=True)
class PrivacyProbe:
    """Some users' settings, read in the round trip of another read of Redis (a page, the
    counts, the shows of suggestions) rather than in one of their own: the reader queues
    ``PrivacyMirror.queue_probe`` on its pipeline and leaves the reply here; ``reply`` stays
    None when no read took it along (a cluster's page, a read from Neo4j)."""

    user_ids: list[str]
    reply: list[str | None] | None = None


class PrivacyMirror:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self.key = f"{settings.redis_prefix}pv:{{privacy}}"
        self._versions = f"{settings.redis_prefix}pvv:{{privacy}}"
        self._set = register(client, "privacy")

    async def set(
        self, user_id: str, privacy: Privacy, version: int, *, force: bool = False
    ) -> None:
        """Mirror committed settings (the newest version wins, unless ``force``: a repair)."""
        await self._set(
            keys=[self.key, self._versions], args=_args(user_id, privacy, version, force)
        )

    async def start_build(self) -> None:
        """Forget the versions before a build from Neo4j: a hash that lost its settings but
        kept their versions would refuse to take them back. A write mirrored from now on is
        newer than what the build reads, and keeps its version."""
        await self._redis.delete(self._versions)

    async def load(self, batch: Sequence[tuple[str, Privacy, int]]) -> None:
        """Install Neo4j's restricted users (a rebuild: a newer write already mirrored wins)."""
        keys = [self.key, self._versions]
        calls = [(keys, _args(uid, privacy, version, False)) for uid, privacy, version in batch]
        await run_many(self._redis, self._set, calls)

    async def mark_built(self) -> None:
        await self._redis.hset(self.key, BUILT, "1")

    def queue_probe(self, pipe: Any, probe: PrivacyProbe) -> None:
        """Queue ``probe``'s read on a pipeline (``probed`` reads its reply)."""
        pipe.hmget(self.key, [*probe.user_ids, BUILT])

    def alongside(self, probe: PrivacyProbe) -> Callable[[Any], Callable[[Any], None]]:
        """``probe``'s read, for another reader's pipeline: it queues the read and gives back
        what takes the reply."""

        def queue(pipe: Any) -> Callable[[Any], None]:
            self.queue_probe(pipe, probe)

            def take(reply: Any) -> None:
                probe.reply = reply

            return take

        return queue

    @staticmethod
    def probed(probe: PrivacyProbe) -> dict[str, Privacy] | None:
        """The probed users' settings; None when no read took the probe along; raises
        PrivacyMissing when the hash is not built."""
        if probe.reply is None:
            return None
        return _decoded(probe.user_ids, probe.reply)

    async def of(self, user_ids: Sequence[str]) -> dict[str, Privacy]:
        """The settings of these users; raises PrivacyMissing when the hash is not built."""
        return _decoded(user_ids, await self._redis.hmget(self.key, [*user_ids, BUILT]))


def _decoded(user_ids: Sequence[str], values: Sequence[str | None]) -> dict[str, Privacy]:
    """An HMGET of these users and the built marker, as settings."""
    if values[-1] is None:
        raise PrivacyMissing
    return {
        uid: Privacy.decode(value) if value is not None else DEFAULT_PRIVACY
        for uid, value in zip(user_ids, values, strict=False)
    }


def _args(user_id: str, privacy: Privacy, version: int, force: bool) -> list[str | int]:
    encoded = "" if privacy.is_default else privacy.encode()
    return [user_id, encoded, version, "1" if force else "0"]
