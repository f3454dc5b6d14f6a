"""Redis calls at the wire's cost, for the reads every request makes (its budget, a page,
counts): the commands of concurrent requests written together on a few long-lived
connections, their replies parsed by hiredis in C.

Why: redis-py's asyncio client checks a connection out of its pool for each call, writes the
call on it alone and reads its reply there, in Python; for a read the mirror answers from
memory, that bookkeeping was the largest share of the API's CPU (docs/performance.md, "Where
a request's CPU goes"). Here a call packs its command (hiredis), appends it to a connection's
buffer and a future to that connection's queue, and returns the future: every command queued
in one turn of the event loop leaves in one write (auto-pipelining, as ioredis does it), and
each reply, in order, resolves the oldest future. No call waits for a connection.

Failures are redis-py's, so callers and breakers treat both clients alike: a connection that
cannot be made or is lost raises ``ConnectionError`` to every call waiting on it; a server
silent for REDIS_SOCKET_TIMEOUT_SECONDS while replies are due, ``TimeoutError`` (the
connection is then dropped, its late replies unread); an error reply, the ``ResponseError``
redis-py raises for it (``NoScriptError`` for NOSCRIPT, ``BusyLoadingError`` while the
server loads its data). A call that failed on a connection opened before it (Redis restarted
since) is sent once more on a new one, as redis-py retries a pooled connection.

A pipeline (``Multiplexed.pipeline``) writes many commands at once on one connection, so Redis
runs them in the order given, and its replies come back together: the write path's mirror
batch goes so. Its scripts are loaded on each connection before their first use there.

Only a single Redis over TCP or a Unix socket is reached so; a Redis Cluster, or TLS, keeps
redis-py's client (``for_settings`` answers None).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import hiredis
from redis.connection import parse_url
from redis.exceptions import (
    BusyLoadingError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from graphsvc.settings import RedisSettings

T = TypeVar("T")

# An error reply's first word -> the exception redis-py raises for it (the rest: ResponseError).
_ERRORS: dict[str, type[Exception]] = {
    "NOSCRIPT": NoScriptError,
    "LOADING": BusyLoadingError,
    "READONLY": ReadOnlyError,
    "OOM": OutOfMemoryError,
}


def error_of(reply: ResponseError) -> Exception:
    """The exception redis-py raises for this error reply."""
    message = str(reply)
    kind = _ERRORS.get(message.split(" ", 1)[0])
    return kind(message) if kind is not None else reply


class Script(Protocol):
    """A Lua script as the server names it (redis-py's registered scripts are such)."""

    @property
    def sha(self) -> str: ...

    @property
    def script(self) -> Any: ...


@dataclass(frozen=True)
class Lua:
    """A script for the multiplexed connections alone (no redis-py client registers it)."""

    script: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.script.encode()).hexdigest())


class _Group:
    """The replies of one pipeline, gathered in order; an error reply is kept as the exception
    redis-py raises for it, so the caller sees every reply before deciding what failed."""

    def __init__(self, future: asyncio.Future[list[Any]], count: int) -> None:
        self.future = future
        self.count = count
        self.replies: list[Any] = []

    def done(self) -> bool:
        return self.future.done()

    def set_exception(self, reason: Exception) -> None:
        self.future.set_exception(reason)

    def add(self, reply: Any) -> bool:
        """True once the last reply came."""
        self.replies.append(error_of(reply) if isinstance(reply, ResponseError) else reply)
        if len(self.replies) < self.count:
            return False
        if not self.future.done():  # its caller may have stopped waiting
            self.future.set_result(self.replies)
        return True


class _Connection(asyncio.Protocol):
    """One connection: a buffer of packed commands, written once per turn of the loop, and the
    futures of the replies due, oldest first."""

    def __init__(self, timeout: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._timeout = timeout
        self._reader = hiredis.Reader(encoding="utf-8", replyError=ResponseError)
        self._due: deque[asyncio.Future[Any] | _Group] = deque()
        self._out: list[bytes] = []
        self._transport: asyncio.Transport | None = None
        self._heard = 0.0  # when the server last answered, or replies started to be due
        self._watch: asyncio.TimerHandle | None = None
        self.lost: Exception | None = None
        self.scripts: set[str] = set()  # the scripts loaded through this connection

    # -- asyncio's side ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's is no subclass

    def data_received(self, data: bytes) -> None:
        self._heard = self._loop.time()
        self._reader.feed(data)
        due = self._due
        try:
            while (reply := self._reader.gets()) is not False:
                future = due[0]
                if isinstance(future, _Group):
                    if future.add(reply):
                        due.popleft()
                    continue
                due.popleft()
                if future.done():  # its caller stopped waiting
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(error_of(reply))
                else:
                    future.set_result(reply)
        except hiredis.ProtocolError as exc:
            self._drop(RedisConnectionError(f"Protocol error from Redis: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        reason = f": {exc}" if exc is not None else ""
        self._fail(RedisConnectionError(f"Connection closed by server{reason}."))

    # -- the callers' side ------------------------------------------------------------------

    def send(self, packed: bytes) -> asyncio.Future[Any]:
        """The future of the reply to ``packed``, written with the turn's other commands."""
        if self.lost is not None:
            raise self.lost
        future = self._loop.create_future()
        self._queue(packed, future)
        return future

    def _queue(self, packed: bytes, due: asyncio.Future[Any] | _Group) -> None:
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(packed)
        if not self._due:
            self._heard = self._loop.time()
        self._due.append(due)
        if self._watch is None:
            self._watch = self._loop.call_later(self._timeout, self._check)

    def send_many(self, packed: bytes, count: int) -> asyncio.Future[list[Any]]:
        """The future of the ``count`` replies to ``packed`` (several commands), in order."""
        if self.lost is not None:
            raise self.lost
        future: asyncio.Future[list[Any]] = self._loop.create_future()
        self._queue(packed, _Group(future, count))
        return future

    def close(self) -> None:
        self._drop(RedisConnectionError("Connection closed by the client."))

    def _flush(self) -> None:
        if self._out and self._transport is not None and self.lost is None:
            self._transport.write(b"".join(self._out))
        self._out.clear()

    def _check(self) -> None:
        """While replies are due, drop a connection the server has left silent too long."""
        self._watch = None
        if not self._due or self.lost is not None:
            return
        silent = self._loop.time() - self._heard
        if silent >= self._timeout:
            self._drop(RedisTimeoutError("Timeout reading from Redis"))
        else:
            self._watch = self._loop.call_later(self._timeout - silent, self._check)

    def _drop(self, reason: Exception) -> None:
        self._fail(reason)
        if self._transport is not None:
            self._transport.abort()

    def _fail(self, reason: Exception) -> None:
        if self.lost is None:
            self.lost = reason
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self._out.clear()
        while self._due:
            future = self._due.popleft()
            if not future.done():
                future.set_exception(reason)


class Multiplexed:
    """A few multiplexed connections to one Redis, taken in turn; each made on first use and
    made again once lost."""

    def __init__(
        self,
        address: dict[str, Any],
        *,
        connections: int,
        connect_timeout: float,
        timeout: float,
    ) -> None:
        self._address = address
        self._slots: list[_Connection | None] = [None] * connections
        self._making: list[asyncio.Future[_Connection] | None] = [None] * connections
        self._turn = 0
        self._connect_timeout = connect_timeout
        self._timeout = timeout

    @classmethod
    def for_settings(cls, settings: RedisSettings) -> Multiplexed | None:
        """The connections to the settings' Redis; None for a Redis Cluster or a TLS connection."""
        if settings.redis_cluster:
            return None
        if settings.redis_url.startswith("rediss://"):  # TLS stays with redis-py
            return None
        address: dict[str, Any] = parse_url(settings.redis_url)  # type: ignore[no-untyped-call]
        return cls(
            address,
            connections=settings.redis_multiplexed_connections,
            connect_timeout=settings.redis_connect_timeout,
            timeout=settings.redis_socket_timeout,
        )

    async def call(self, *args: Any) -> Any:
        """One command's reply."""
        packed = hiredis.pack_command(args)
        return await self._on_a_connection(lambda connection: connection.send(packed))

    async def pipeline(
        self, commands: Sequence[Sequence[Any]], scripts: Sequence[Script] = ()
    ) -> list[Any]:
        """The replies of ``commands``, written together on one connection (Redis runs them
        in this order), an error reply in its place as the exception redis-py raises for it.
        ``scripts``: those the commands run by EVALSHA; each is loaded on a connection
        before its first use there, in the same write (a Redis that lost them since answers
        NOSCRIPT, and they are loaded again the next time, on every connection)."""
        body = b"".join(hiredis.pack_command(tuple(command)) for command in commands)

        async def send(connection: _Connection) -> list[Any]:
            loads = [script for script in scripts if script.sha not in connection.scripts]
            packed = b"".join(hiredis.pack_command(("SCRIPT", "LOAD", s.script)) for s in loads)
            replies = await connection.send_many(packed + body, len(loads) + len(commands))
            if any(isinstance(reply, NoScriptError) for reply in replies):
                for each in self._slots:  # the server lost them, for every connection
                    if each is not None:
                        each.scripts.clear()
            else:
                connection.scripts.update(script.sha for script in loads)
            return replies[len(loads) :]

        return await self._on_a_connection(send)

    async def script(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """A registered script's reply, loaded first where the server lacks it."""
        try:
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.call("SCRIPT", "LOAD", script.script)
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)

    async def _on_a_connection(self, send: Callable[[_Connection], Awaitable[T]]) -> T:
        """``send`` on the next connection in turn, made first if need be; once more on a new
        one when the connection was opened before this call and is lost (Redis may have
        restarted), as redis-py retries a pooled connection."""
        slot = self._turn
        self._turn = (slot + 1) % len(self._slots)
        connection = self._slots[slot]
        if connection is None or connection.lost is not None:
            return await send(await self._connect(slot))
        try:
            return await send(connection)
        except RedisConnectionError:
            return await send(await self._connect(slot))

    async def aclose(self) -> None:
        for slot, connection in enumerate(self._slots):
            if connection is not None:
                connection.close()
                self._slots[slot] = None

    async def _connect(self, slot: int) -> _Connection:
        """The slot's connection, made once however many callers ask at the same time (and
        made even if the caller that started it stops waiting)."""
        making = self._making[slot]
        if making is None:
            making = asyncio.ensure_future(self._open(slot))
            self._making[slot] = making
        return await asyncio.shield(making)

    async def _open(self, slot: int) -> _Connection:
        loop = asyncio.get_running_loop()
        address = self._address

        def protocol() -> _Connection:
            return _Connection(self._timeout)

        host, port = address.get("host", "localhost"), address.get("port", 6379)
        where = address.get("path") or f"{host}:{port}"
        try:
            async with asyncio.timeout(self._connect_timeout):
                if "path" in address:
                    _, connection = await loop.create_unix_connection(protocol, address["path"])
                else:
                    _, connection = await loop.create_connection(protocol, host, port)
                await self._hello(connection)
        except (OSError, TimeoutError) as exc:
            raise RedisConnectionError(f"Error connecting to {where}. {exc}") from exc
        finally:
            self._making[slot] = None
        self._slots[slot] = connection
        return connection

    async def _hello(self, connection: _Connection) -> None:
        """Authenticate and select the database, as the URL says."""
        address = self._address
        password = address.get("password")
        if password is not None:
            user = address.get("username")
            auth: tuple[Any, ...] = ("AUTH", user, password) if user else ("AUTH", password)
            await connection.send(hiredis.pack_command(auth))  #
        if address.get("db"):
            select: tuple[Any, ...] = ("SELECT", address["db"])
            await connection.send(hiredis.pack_command(select))  #
