"""Opening Redis (one server, or a Redis Cluster with ``REDIS_CLUSTER=1``) and sending
batches of commands and Lua scripts to either in one pipelined round trip.

Two behaviours of redis-py's asyncio cluster client shape this module:

- Its connections are not a blocking pool: a node with ``max_connections`` busy connections
  raises MaxConnectionsError at once. A burst of requests must queue instead (as with the
  single server's BlockingConnectionPool), so commands and pipelines wait for a permit of a
  gate as wide as ``REDIS_POOL_SIZE``; each holds at most one connection per node.
- A cluster pipeline does not load scripts (a node that lacks one answers NOSCRIPT), and
  ``await script(..., client=pipe)`` drops what was queued (awaiting a ClusterPipeline
  initializes it again). :class:`Batch` queues scripts as raw EVALSHA and sends those that met
  NOSCRIPT once more after loading the scripts on every primary.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.crc import key_slot
from redis.exceptions import ClusterDownError, NoScriptError, RedisError, SlotNotCoveredError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from graphsvc.concurrency.breaker import Breaker
from graphsvc.settings import RedisSettings

Client = aioredis.Redis | RedisCluster

# What an unreachable (or restarting, still loading) Redis raises, or a cluster missing a node.
# Not the cluster's other errors: a cross-slot call is a bug to surface, not an outage.
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ClusterDownError, SlotNotCoveredError)


def redis_breaker(retry_seconds: float) -> Breaker:
    """A breaker that skips an unreachable Redis for ``retry_seconds``; a Redis that answers
    but refuses a read (OOM, READONLY, MISCONF) costs that read its fallback only."""
    return Breaker(retry_seconds, unreachable=REDIS_DOWN, refusing=(RedisError,))


Pipe = Any  # aioredis.client.Pipeline | ClusterPipeline: both queue on method calls
# One command as Redis takes it (name, then arguments): what adapters hand the write path to
# send beside the mirror write, in one round trip.
Command = tuple[Any, ...]


def queued(commands: Sequence[Command]) -> Callable[[Pipe], None]:
    """Queues ``commands`` on a pipeline (``Batch.call``)."""

    def queue(pipe: Pipe) -> None:
        for command in commands:
            pipe.execute_command(*command)

    return queue


# Set while a task holds a permit: a call made under it (redirects, script reloads) must not
# wait for a second permit, which could deadlock a full gate.
_holding: ContextVar[bool] = ContextVar("graphsvc_redis_permit", default=False)


async def _acquire(permits: asyncio.Semaphore, wait: float) -> None:
    """A permit for one connection, at once while one is free, else within ``wait`` seconds;
    then "No connection available", as redis-py's blocking pool says it."""
    if not permits.locked():
        await permits.acquire()
        return
    try:
        async with asyncio.timeout(wait):
            await permits.acquire()
    except TimeoutError:
        raise RedisConnectionError("No connection available.") from None


class _Gate:
    def __init__(self, size: int, timeout: float) -> None:
        self._permits = asyncio.Semaphore(size)
        self._timeout = timeout

    @asynccontextmanager
    async def permit(self) -> AsyncIterator[None]:
        if _holding.get():
            yield
            return
        await _acquire(self._permits, self._timeout)
        token = _holding.set(True)
        try:
            yield
        finally:
            _holding.reset(token)
            self._permits.release()


class _GatedPipeline(ClusterPipeline):
    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        async with self.cluster_client.gate.permit():
            return await super().execute(raise_on_error, allow_redirections)


class GatedRedisCluster(RedisCluster):
    """A cluster client whose callers queue for a permit when all are taken."""

    gate: _Gate

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.gate.permit():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        if shard_hint:
            raise ValueError("shard_hint is not supported in cluster mode")
        return _GatedPipeline(self, transaction)


class HiredisPacked(aioredis.Connection):
    """A connection whose commands hiredis packs, in C. redis-py's asyncio connection packs
    them in Python, several times slower, and a serving process under follows spent a visible
    share of its CPU doing it (docs/performance.md, "Where a request's CPU goes"). The bytes
    are the same (a test sends both ways); a first argument with spaces ("SCRIPT LOAD") is
    split as redis-py splits it."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if (isinstance(first, str) and " " in first) or (
            isinstance(first, bytes) and b" " in first
        ):
            args = (*first.split(), *args[1:])
        return [hiredis.pack_command(args)]


class GatedPool(aioredis.ConnectionPool):
    """A pool of at most ``max_connections`` connections whose callers wait, up to
    ``timeout`` seconds, for one to be released rather than fail (what redis-py's
    BlockingConnectionPool does). Its wait is a semaphore that a caller passes through at once
    while a connection is free, where the blocking pool enters a condition and a timeout for
    every command, a measurable share of a read's CPU."""

    def __init__(self, *args: Any, timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._permits = asyncio.Semaphore(self.max_connections)
        self._wait = timeout

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        await _acquire(self._permits, self._wait)
        try:
            return await super().get_connection(*args, **kwargs)
        except BaseException:
            self._permits.release()
            raise

    async def release(self, connection: Any) -> None:
        try:
            await super().release(connection)
        finally:
            self._permits.release()


def open_redis(settings: RedisSettings) -> Client:
    """A client whose callers wait for a free connection when all are busy (a burst of
    requests queues rather than failing with "Too many connections")."""
    if settings.redis_cluster:
        client = GatedRedisCluster.from_url(
            settings.redis_url,
            decode_responses=True,
            # headroom over the gate for the calls made while holding a permit
            max_connections=settings.redis_pool_size + 8,
            socket_connect_timeout=settings.redis_connect_timeout,
            socket_timeout=settings.redis_socket_timeout,
        )
        client.gate = _Gate(settings.redis_pool_size, settings.redis_pool_timeout)
        return client
    pool = GatedPool.from_url(
        settings.redis_url,
        decode_responses=True,
        max_connections=settings.redis_pool_size,
        timeout=settings.redis_pool_timeout,
        socket_connect_timeout=settings.redis_connect_timeout,
        socket_timeout=settings.redis_socket_timeout,
        connection_class=HiredisPacked,
        # A pooled connection can be dead (Redis restarted since): one retry on a new
        # connection, so that is not taken for an outage. A timeout is not retried.
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    )
    return aioredis.Redis(connection_pool=pool)


def is_cluster(client: object) -> bool:
    return isinstance(client, RedisCluster)


class Batch:
    """Scripts and commands for one pipelined round trip (not a transaction), on a single
    Redis or a cluster, where they are grouped by node; replies come back in order.

    Scripts are sent first, each as one command, and then the other commands in the order they
    were queued: so the first replies are the scripts', which is how a script a cluster node
    lacked (NOSCRIPT) is found and sent again, whatever the other commands queued.
    """

    def __init__(self, client: Client, *, resend_missing: bool = False) -> None:
        """``resend_missing``: on a single Redis too, send scripts as raw EVALSHA (no SCRIPT
        EXISTS round trip first, which redis-py's pipeline makes each time) and send again
        those the server lacked, as on a cluster. Only for batches whose other commands may
        run whether or not the scripts did (reads, or idempotent writes): a mirror write's
        event must not be appended when its script was refused."""
        self._client = client
        self._resend = resend_missing or is_cluster(client)
        self._scripts: list[tuple[AsyncScript, tuple[Any, ...]]] = []
        self._calls: list[Callable[[Pipe], object]] = []

    def __len__(self) -> int:
        return len(self._scripts) + len(self._calls)

    def script(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> None:
        self._scripts.append((script, ("EVALSHA", script.sha, len(keys), *keys, *args)))

    def call(self, queue: Callable[[Pipe], object]) -> None:
        """Other commands, queued by ``queue(pipe)`` (e.g. ``lambda p: p.zadd(...)``), after
        every script, in the order given."""
        self._calls.append(queue)

    async def _send(
        self,
        scripts: Sequence[tuple[AsyncScript, tuple[Any, ...]]],
        calls: Sequence[Callable[[Pipe], object]],
        raise_on_error: bool,
    ) -> list[Any]:
        async with self._client.pipeline(transaction=False) as pipe:
            for script, command in scripts:
                if not self._resend:
                    pipe.scripts.add(script)  # the single server's pipeline loads it if missing
                pipe.execute_command(*command)
            for queue in calls:
                queue(pipe)
            return await pipe.execute(raise_on_error=raise_on_error)

    async def execute(self) -> list[Any]:
        if not len(self):
            return []
        if not self._resend:
            return await self._send(self._scripts, self._calls, raise_on_error=True)
        replies = await self._send(self._scripts, self._calls, raise_on_error=False)
        missing = [
            n
            for n, reply in enumerate(replies[: len(self._scripts)])
            if isinstance(reply, NoScriptError)
        ]
        if missing:  # a node started after the scripts were loaded (or never saw them)
            for script in {self._scripts[n][0].sha: self._scripts[n][0] for n in missing}.values():
                await self._client.script_load(script.script)  # on every primary
            again = await self._send([self._scripts[n] for n in missing], [], raise_on_error=False)
            for n, reply in zip(missing, again, strict=True):
                replies[n] = reply
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies


def script_groups(
    key_sets: Iterable[Sequence[str]], cluster: bool, per_call: int
) -> list[list[str]]:
    """Each user's keys (one slot's) grouped into script calls: on a cluster the users of one
    slot a call, on a single Redis ``per_call`` users a call."""
    groups: dict[int, list[str]] = {}
    for n, keys in enumerate(key_sets):
        group = key_slot(keys[0].encode()) if cluster else n // per_call
        groups.setdefault(group, []).extend(keys)
    return list(groups.values())
