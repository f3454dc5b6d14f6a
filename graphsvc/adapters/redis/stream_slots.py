"""Redis adapter: the open event streams of each API key, counted across every API process.

A key's streams are one sorted set (``<prefix>streams:<key id>``): a member per open stream
(its random token), scored with the time its slot lapses. A stream holds its slot by renewing
it; a process that stops (killed, partitioned) stops renewing, and its slots lapse on their
own. Taking, renewing and counting are one script on the server's clock (no process's clock
decides when another's slot lapsed), so two processes never both take the last slot.
"""

from __future__ import annotations

from redis.exceptions import RedisError

from graphsvc.adapters.redis.client import REDIS_DOWN, Client
from graphsvc.settings import RedisSettings

SLOTS_UNREACHABLE = REDIS_DOWN
# Redis answers with an error (out of memory, a read-only replica): test SLOTS_UNREACHABLE first.
SLOTS_REFUSED = RedisError

# KEYS[1]: the key's streams. ARGV: the stream's token, the most streams, the slot's life (ms).
# Drops lapsed slots, then holds the token's slot for the life from now (taking it when there
# is room); {1, streams} when held, {0, streams} when every slot is taken.
_HOLD = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local open = redis.call('ZCARD', KEYS[1])
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held then
  if open >= tonumber(ARGV[2]) then return {0, open} end
  open = open + 1
end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, open}
"""


class StreamSlots:
    def __init__(self, client: Client, settings: RedisSettings) -> None:
        self._redis = client
        self._prefix = f"{settings.redis_prefix}streams:"
        self._hold = client.register_script(_HOLD)

    async def hold(self, key_id: str, token: str, most: int, seconds: float) -> tuple[bool, int]:
        """Hold the stream ``token``'s slot among the key's ``most`` for ``seconds`` from now:
        (held, the key's open streams); not held when every slot is taken by others."""
        ms = max(1, int(seconds * 1000))
        held, count = await self._hold(keys=[self._prefix + key_id], args=[token, most, ms])
        return bool(held), int(count)

    async def release(self, key_id: str, token: str) -> None:
        await self._redis.zrem(self._prefix + key_id, token)
