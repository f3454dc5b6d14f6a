"""The multiplexed connections of the hot reads and of the mirror's batches against a real
redis-server: concurrent calls each get their own reply, errors are redis-py's, a pipeline runs
in order with its scripts loaded once per connection, a caller that stops waiting leaves the
others' replies in place, a restarted or silent server fails the calls waiting on it and the next call
reconnects."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from graphsvc.adapters.redis.multiplexed import Lua, Multiplexed
from graphsvc.settings import Settings
from tests.support.helpers import ThrowawayRedis, free_port


def multiplexed(url: str, *, connections: int = 2, timeout: float = 5.0) -> Multiplexed:
    settings = Settings().with_values(
        redis_url=url, redis_multiplexed_connections=connections, redis_socket_timeout=timeout
    )
    found = Multiplexed.for_settings(settings.redis)
    assert found is not None
    return found


async def test_concurrent_calls_each_get_their_own_reply(server_settings: Settings) -> None:
    wire = multiplexed(server_settings.redis.redis_url)
    try:
        keys = [f"test:mx:{time.time_ns()}:{n}" for n in range(500)]
        await asyncio.gather(*(wire.call("SET", key, n) for n, key in enumerate(keys)))
        got = await asyncio.gather(*(wire.call("GET", key) for key in keys))
        assert got == [str(n) for n in range(500)]
        counted = await asyncio.gather(*(wire.call("INCRBY", keys[0], 2) for _ in range(100)))
        assert sorted(counted) == list(range(2, 201, 2))  # each its own reply, none lost
        await wire.call("DEL", *keys)
    finally:
        await wire.aclose()


async def test_errors_are_redis_pys_and_scripts_are_loaded_where_missing(
    server_settings: Settings,
) -> None:
    wire = multiplexed(server_settings.redis.redis_url)
    key = f"test:mx:{time.time_ns()}"
    try:
        await wire.call("SET", key, "text")
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            await wire.call("LPUSH", key, "x")
        script = Lua(f"return {{'{time.time_ns()}', ARGV[1], redis.call('GET', KEYS[1])}}")
        with pytest.raises(NoScriptError):
            await wire.call("EVALSHA", script.sha, 1, key, "a")
        reply = await wire.script(script, [key], ["a"])
        assert reply[1:] == ["a", "text"]
        assert await wire.call("GET", key) == "text"  # the connection is still in step
        await wire.call("DEL", key)
    finally:
        await wire.aclose()


async def test_a_caller_that_stops_waiting_leaves_the_others_replies_in_place(
    server_settings: Settings,
) -> None:
    wire = multiplexed(server_settings.redis.redis_url, connections=1)
    key, counter = f"test:mx:{time.time_ns()}", f"test:mx:{time.time_ns()}:n"
    try:
        await wire.call("SET", key, "kept")  # connected: what follows is written at once
        cancelled = asyncio.ensure_future(wire.call("GET", key))
        given_up = asyncio.ensure_future(wire.pipeline([("INCR", counter), ("INCR", counter)]))
        after = asyncio.ensure_future(wire.call("ECHO", "mine"))
        await asyncio.sleep(0)
        cancelled.cancel()
        given_up.cancel()
        assert await after == "mine"
        assert await wire.call("GET", key) == "kept"
        assert await wire.call("GET", counter) == "2"  # a pipeline once sent is not undone
    finally:
        await wire.call("DEL", key, counter)
        await wire.aclose()


async def test_a_pipeline_runs_in_order_with_each_reply_or_error_in_its_place(
    server_settings: Settings,
) -> None:
    wire = multiplexed(server_settings.redis.redis_url, connections=2)
    key = f"test:mx:{time.time_ns()}"
    script = Lua(f"return {{'{time.time_ns()}', redis.call('INCR', KEYS[1])}}")
    run = ("EVALSHA", script.sha, 1, key)
    try:
        replies = await wire.pipeline(
            [run, ("LPUSH", key, "x"), ("INCR", key)],  # a counter is no list
            scripts=[script],
        )
        assert replies[0][1] == 1 and replies[2] == 2  # in order, after the script's load
        assert isinstance(replies[1], ResponseError) and "WRONGTYPE" in str(replies[1])
        assert (await wire.pipeline([run], scripts=[script]))[0][1] == 3  # the other connection
        # loaded once per connection: a Redis that lost it answers NOSCRIPT in its place...
        await wire.call("SCRIPT", "FLUSH")
        lost = await wire.pipeline([run, ("GET", key)], scripts=[script])
        assert isinstance(lost[0], NoScriptError) and lost[1] == "3"
        # ...and it is loaded again on every connection, each of which had it
        for expected in (4, 5):
            assert (await wire.pipeline([run], scripts=[script]))[0][1] == expected
    finally:
        await wire.call("DEL", key)
        await wire.aclose()


async def test_a_restarted_server_is_reconnected_to(throwaway_redis: ThrowawayRedis) -> None:
    wire = multiplexed(throwaway_redis.url, connections=1)
    try:
        assert await wire.call("PING") == "PONG"
        throwaway_redis.kill9()
        with pytest.raises(RedisConnectionError):  # down: refused at once, not hung
            await asyncio.wait_for(wire.call("PING"), 5)
        throwaway_redis.start()
        assert await wire.call("SET", "k", "v") == "OK"
        with throwaway_redis.client() as plain:
            killed = plain.client_kill_filter(_type="normal", skipme=True)
        assert killed >= 1  # the multiplexed connection, dropped under it
        assert await wire.call("GET", "k") == "v"  # sent again on a new connection
    finally:
        await wire.aclose()


async def test_a_silent_server_fails_the_waiting_calls_after_the_timeout(
    throwaway_redis: ThrowawayRedis,
) -> None:
    wire = multiplexed(throwaway_redis.url, connections=1, timeout=0.5)
    try:
        assert await wire.call("PING") == "PONG"
        with throwaway_redis.client() as plain:
            plain.execute_command("CLIENT", "PAUSE", 3000, "ALL")
        began = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await asyncio.wait_for(wire.call("PING"), 5)
        assert time.monotonic() - began < 2.5
        with throwaway_redis.client() as plain:
            plain.execute_command("CLIENT", "UNPAUSE")
        assert await wire.call("PING") == "PONG"  # a new connection
    finally:
        await wire.aclose()


async def test_no_server_is_a_connection_error() -> None:
    wire = multiplexed(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(RedisConnectionError, match="Error connecting"):
        await wire.call("PING")
    await wire.aclose()
