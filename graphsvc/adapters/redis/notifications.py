"""Redis adapter: each user's notification stream (``nt:{u}``, a Redis stream in the user's
slot), NOTIFICATIONS_MAX entries at most (approximately, the oldest trimmed first). A bell's
ringing job adds a ``posted`` entry per ringer (``notification_ring.lua``: once per post), and marks the post rung when done
(``notification_rung.lua``); the user's Server-Sent Events read it from a Last-Event-ID on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphsvc.adapters.redis.client import Batch, Client, is_cluster, script_groups
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register
from graphsvc.domain.timeline import Post

Entry = tuple[str, dict[str, str]]
USERS_PER_CALL = 500  # users per ring script on a single Redis
# A stream's newest entries a ring looks at for the same post: a step run again comes within a
# lease of the first run, long before a user gets this many other notifications.
REPEAT_WINDOW = 16


@dataclass(frozen=True, slots=True)
class StreamEnds:
    """Where a user's notification stream stands: its newest id, and the newest id trimmed
    from it ('0-0': none)."""

    last: str
    trimmed: str


class NotificationStreams:
    def __init__(self, client: Client, mirror: Mirror, keep: int) -> None:
        self._redis = client
        self._mirror = mirror
        self._keep = keep
        self._cluster = is_cluster(client)
        self._ring = register(client, "notification_ring")
        self._rung = register(client, "notification_rung")

    def key(self, user_id: str) -> str:
        return self._mirror.key("nt", user_id)

    async def ring(self, users: Sequence[str], post: Post, *, again: bool = True) -> int:
        """Add the post's notification to each user's stream (one round trip); how many got
        it now (not before). ``again`` False: a step that surely never ran (a job's steps
        after the first of its run), whose streams need no look for a repeat."""
        if not users:
            return 0
        args = [post.author, post.post_id, post.at, self._keep, REPEAT_WINDOW if again else 0]
        batch = Batch(self._redis, resend_missing=True)  # idempotent: a post once per stream
        groups = script_groups(([self.key(u)] for u in users), self._cluster, USERS_PER_CALL)
        for keys in groups:
            batch.script(self._ring, keys, args)
        return sum(int(added) for added in await batch.execute())

    async def rung(self, post: Post) -> None:
        """The post's ringing is done: kept in its state (``timeline_publish.lua``)."""
        await self._rung(keys=[self._mirror.key("ps", post.author)], args=[post.post_id])

    async def ends(self, user_id: str) -> StreamEnds:
        key = self.key(user_id)
        if not await self._redis.exists(key):  # nothing rung yet (or an erased user's)
            return StreamEnds("0-0", "0-0")
        info = await self._redis.xinfo_stream(key)
        return StreamEnds(info["last-generated-id"], info.get("max-deleted-entry-id", "0-0"))

    async def after(self, user_id: str, last_id: str, count: int) -> list[Entry]:
        """The oldest ``count`` entries after ``last_id``."""
        return await self._redis.xrange(self.key(user_id), f"({last_id}", "+", count=count)

    async def after_many(self, positions: Mapping[str, str], count: int) -> dict[str, list[Entry]]:
        """``after`` for many users in one round trip (the users whose streams grew)."""
        users = list(positions)
        if not users:
            return {}
        async with self._redis.pipeline(transaction=False) as pipe:
            for user in users:
                pipe.xrange(self.key(user), f"({positions[user]}", "+", count=count)
            replies = await pipe.execute()
        return {user: entries for user, entries in zip(users, replies, strict=True) if entries}

    async def forget(self, user_id: str) -> None:
        """An erased user's notifications go."""
        await self._redis.unlink(self.key(user_id))
