"""The Lua scripts (``lua/``; the mirror's share the prelude ``common.lua``) and the bulk path
that runs one script for many users in one pipelined stream.

Large batches (bulk loads, rebuilds) are packed by hiredis in C and written on one connection:
Python packing was most of the time of a mirror rebuild. A cluster has no single connection:
there, batches of 1,000 calls go as cluster pipelines (one pipeline per node, in parallel).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from hiredis import pack_command
from redis.commands.core import AsyncScript
from redis.exceptions import ResponseError

from graphsvc.adapters.redis.client import Batch, Client, is_cluster

_LUA = Path(__file__).resolve().parent / "lua"
PACKED_FROM = 256  # calls from which a bulk run is packed on one connection
Calls = list[tuple[list[str], list[Any]]]


@cache
def script_source(name: str) -> str:
    """A script with its preludes; a ``#!lua`` flags line must stay the first line. Every
    script gets ``bytes.lua``; the mirror's (all but timelines', leases' and budgets') get ``common.lua``
    (the mirror's protocol) too."""
    body = (_LUA / f"{name}.lua").read_text(encoding="utf-8")
    shebang = ""
    if body.startswith("#!"):
        shebang, _, body = body.partition("\n")
        shebang += "\n"
    preludes = ["bytes"] if name.startswith(("feed_", "lease", "budget")) else ["bytes", "common"]
    shared = "".join((_LUA / f"{p}.lua").read_text(encoding="utf-8") + "\n" for p in preludes)
    return shebang + shared + body


def register(client: Client, name: str) -> AsyncScript:
    return client.register_script(script_source(name))


async def run_many(client: Client, script: AsyncScript, calls: Calls) -> list[Any]:
    """Run one script for many (keys, args) calls, in as few round trips as the server
    allows; their replies, in order. Every reply is read before the first error is raised."""
    replies: list[Any] = []
    if len(calls) < PACKED_FROM or is_cluster(client):
        for start in range(0, len(calls), 1_000):
            batch = Batch(client)
            for keys, args in calls[start : start + 1_000]:
                batch.script(script, keys, args)
            replies += await batch.execute()
        return replies
    sha = await client.script_load(script.script)
    pool = client.connection_pool
    connection = await pool.get_connection()
    first_error: Exception | None = None
    unread = 0  # replies of the chunk sent before: read once the next one is on its way

    async def read(count: int) -> None:
        nonlocal first_error
        for _ in range(count):  # every reply is read, as a pipeline would, before raising
            try:
                replies.append(await connection.read_response())
            except ResponseError as exc:
                first_error = first_error or exc

    try:
        for start in range(0, len(calls), 1_000):
            chunk = calls[start : start + 1_000]
            await connection.send_packed_command(
                b"".join(
                    pack_command(("EVALSHA", sha, len(keys), *keys, *args)) for keys, args in chunk
                )
            )
            await read(unread)  # Redis runs this chunk while the next one is packed
            unread = len(chunk)
            if first_error is not None:
                raise first_error
        await read(unread)
        if first_error is not None:
            raise first_error
    except BaseException:
        await connection.disconnect()  # unread replies would confuse the next user
        raise
    finally:
        await pool.release(connection)
    return replies
