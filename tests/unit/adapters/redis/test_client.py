"""The Redis client's command packing: hiredis packs the bytes redis-py packs."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from graphsvc.adapters.redis.client import HiredisPacked


@pytest.mark.parametrize(
    "args",
    [
        ("EVALSHA", "a" * 40, 2, "gs:m:{u1}", "gs:r:{u1}", "u2", 1_700_000_000_123_456, -5),
        ("ZADD", "k", 0.1, "m", 1e20, "n", float("inf"), "o"),
        ("SET", "k", "émile", "PX", 30_000),
        ("SET", b"k", b"\x00\xff"),
        ("SCRIPT LOAD", "return 1"),
        ("CLIENT", "SETNAME", "x"),
    ],
)
def test_commands_packed_by_hiredis_are_the_bytes_redis_py_packs(args: tuple) -> None:
    ours = b"".join(HiredisPacked().pack_command(*args))
    assert ours == b"".join(aioredis.Connection().pack_command(*args))
