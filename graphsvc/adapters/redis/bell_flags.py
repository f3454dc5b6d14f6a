"""Redis adapter: whether an author's posts may skip their ringing job (``bells_quiet.lua``).

Most authors have no bell-ringer, and a ringing job that finds none still costs a Neo4j seek
and a queued job per post, in the publisher's process. A ringing job that finds no ringer at all
says so in the author's mirror meta, for QUIET_MS; every follow with notify on committed since
takes that back in its mirror write (``lua/edge.lua``), so a post of an author with a ringer rings. The flag says
only "none, as of a recent look": losing it costs a ringing job, never a notification.
"""

from __future__ import annotations

import secrets

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register

# How long a look that found no ringer holds: the longest a new ringer's notifications wait when
# its mark was lost (Redis unreachable after the commit); an author without ringers pays one
# ringing job per this long.
QUIET_MS = 60_000


class BellFlags:
    def __init__(self, client: Client, mirror: Mirror) -> None:
        self._mirror = mirror
        self._script = register(client, "bells_quiet")

    async def token(self, author: str) -> str | None:
        """The author's token as a ringing job starts (None: its meta is not built)."""
        found = await self._script(keys=[self._key(author)], args=["token", secrets.token_hex(8)])
        return found if isinstance(found, str) else None

    async def quiet(self, author: str, token: str) -> bool:
        """The author has no bell-ringer, as a job that read ``token`` found: its posts skip
        the ringing job from now on, unless a new ringer was mirrored since."""
        args = ["quiet", token, QUIET_MS]
        return bool(await self._script(keys=[self._key(author)], args=args))

    def _key(self, author: str) -> str:
        return self._mirror.key("m", author)
