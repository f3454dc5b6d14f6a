"""No script call, and no command naming several keys, mixes two hash slots: what a Redis
Cluster demands (no script touches keys of two users).

On a cluster (REDIS_CLUSTER=1) redis-py refuses such a call before sending it, and a server
would answer CROSSSLOT: there the workload getting through is the test (and the single-Redis
page, which does mix slots, is shown to be refused). On a single Redis the test watches the
server with MONITOR while the service works, asks the server which keys each command named
(COMMAND GETKEYS) and computes their slots as a cluster would (CRC16 of the hash tag).
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot
from redis.exceptions import RedisClusterException

from graphsvc.bootstrap import Connections, Services, build
from graphsvc.domain.model import Counts
from graphsvc.domain.privacy import Viewer
from graphsvc.ops.data.loader import rebuild_mirror
from graphsvc.settings import Settings

UserIds = Callable[[str], str]
_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})|\\(.)")
_CONTROL = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b"}


def _unescape(text: str) -> str:
    """An argument as MONITOR quotes it (sdscatrepr) back to its text."""
    return _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else _CONTROL.get(m[2], m[2]), text)


@asynccontextmanager
async def monitored(settings: Settings) -> AsyncIterator[list[list[str]]]:
    """Every command clients sent to the (single) server while the block ran; the commands
    scripts run inside the server are left out (their keys are the script's KEYS)."""
    seen: list[list[str]] = []
    marker = f"monitor-end-{uuid.uuid4().hex}"
    # the monitor may sit idle while Neo4j works: no read timeout of a few seconds
    client = aioredis.Redis.from_url(
        settings.redis.redis_url, decode_responses=True, socket_timeout=300
    )
    try:
        async with client.monitor() as monitor:

            async def read() -> None:
                while True:
                    line = await monitor.connection.read_response()
                    _, _, rest = line.partition(" [")
                    where, _, quoted = rest.partition("] ")
                    args = [_unescape(arg) for arg in _ARG.findall(quoted)]
                    if args == ["ECHO", marker] or args == ["echo", marker]:
                        return
                    if not where.endswith(" lua"):
                        seen.append(args)

            reader = asyncio.create_task(read())
            try:
                yield seen
            finally:
                await client.echo(marker)  # after everything the block sent
                await asyncio.wait_for(reader, 30)
    finally:
        await client.aclose()


async def cross_slot(settings: Settings, commands: list[list[str]]) -> list[list[str]]:
    """The commands whose keys (as the server itself finds them) span several slots."""
    client = aioredis.Redis.from_url(settings.redis.redis_url, decode_responses=True)
    try:
        async with client.pipeline(transaction=False) as pipe:
            for args in commands:
                pipe.command_getkeys(*args)
            found = await pipe.execute(raise_on_error=False)  # keyless commands: an error
    finally:
        await client.aclose()
    return [
        args
        for args, keys in zip(commands, found, strict=True)
        if isinstance(keys, list) and len({key_slot(k.encode()) for k in keys}) > 1
    ]


async def workload(service: Services, uid: UserIds) -> None:
    """Follows, unfollows, cold and warm pages and counts, a status propagation, interactions and
    suggestions, a bulk rebuild (the packed path on a single Redis) and a repair."""
    a, b, c = uid("a"), uid("b"), uid("c")
    fans = [uid(f"fan{n}") for n in range(130)]
    for fan in fans[:6]:
        await service.relations.follow(fan, a)
    for start in range(6, len(fans), 31):  # users for the rebuild below
        await asyncio.gather(
            *(service.relations.follow(fan, b) for fan in fans[start : start + 31])
        )
    await service.relations.follow(a, b)
    await service.relations.follow(b, a)
    await service.relations.follow(c, a)
    await service.relations.unfollow(fans[0], a)
    assert (await service.follow_pages.counts(c)).following == 1  # cold counts: install_counts
    first = await service.follow_pages.followers(a, limit=2)  # cold list: install, then page
    assert first.next_cursor
    await service.follow_pages.followers(a, limit=2, cursor=first.next_cursor)
    await service.follow_pages.following(b)
    await service.moderation.set_status(fans[1], "suspended")  # status, then its propagation
    await service.core.jobs.drain()
    shown = [e.user_id for e in (await service.follow_pages.followers(a, limit=50)).items]
    assert fans[1] not in shown and fans[2] in shown
    # read for a viewer: the owner's privacy settings taken along (a cluster: another slot)
    assert (await service.follow_pages.followers(a, limit=5, viewer=Viewer(c))).items
    assert (await service.follow_pages.counts_for(a, Viewer(c))).counts is not None
    now = time.time_ns() // 1_000
    await service.interactions.record_raw([(a, c, 5.0, now)])
    await service.background.interaction_flusher.flush_all()
    await service.suggestions.suggestions(a, 5)  # computes, then the put-if-current script
    answer = await service.suggestions.recommend(a, 5)  # cached; counted alongside the shows
    await service.relations.follow(a, c, answer.recommendation_id)  # counted once: a script
    await service.suggestions.dismiss(a, c)
    await rebuild_mirror(service, fans, progress=False)  # 260 install calls
    # A bulk load's one-script install (in a real load only right after a clear): a user
    # unknown to Neo4j, installed empty, which the suite's consistency checks accept.
    empty = (-1, "", 0)
    await service.core.redis.mirror_builds.install_loaded(
        [(uid("loaded"), now, Counts.zero(), empty, empty)]
    )
    await service.core.mirror_sync.repair([b])  # drop, rebuild, force_status (a transaction)


def split_service(connections: Connections, settings: Settings, split_page: bool) -> Services:
    return build(settings, connections, split_page=split_page)


async def test_every_call_stays_in_one_slot(
    connections: Connections, server_settings: Settings, uid: UserIds
) -> None:
    service = split_service(connections, server_settings, split_page=True)
    if server_settings.redis.redis_cluster:
        await workload(service, uid)  # a call across slots would raise here
        return
    async with monitored(server_settings) as commands:
        await workload(service, uid)
    redis = service.core.redis
    scripts = {
        s.sha: name
        for adapter in (redis.mirror, redis.mirror_reads, redis.mirror_builds, redis.statuses)
        for name, s in vars(adapter).items()
        if name.startswith("_") and hasattr(s, "sha")
    }
    scripts[service.suggestions.cache._put.sha] = "put_if_current"
    scripts[service.feedback.counters._follow_once.sha] = "count_follow_once"
    # the counts-and-settings script and a batch's mirror write read or write several slots,
    # on a single Redis only (the next test), where a batch never takes the per-half script
    across = {redis.mirror_reads._counts.sha, redis.mirror._edges.sha}
    for sha in (*across, redis.mirror._edge.sha):
        del scripts[sha]
    called = {scripts.get(args[1]) for args in commands if args[0].upper() == "EVALSHA"}
    assert set(scripts.values()) <= called, f"not exercised: {set(scripts.values()) - called}"
    assert sum(args[0].upper() == "EVALSHA" for args in commands) > 300
    crossing = await cross_slot(server_settings, commands)
    assert [args for args in crossing if args[1] not in across] == []


async def test_the_single_redis_page_counts_and_mirror_write_are_the_calls_across_slots(
    connections: Connections, server_settings: Settings, uid: UserIds
) -> None:
    """The single-script page reads the inactive set (and, for a viewer, the privacy settings)
    with the user's list, counts for a viewer read the settings with the counts, and a batch's
    mirror write is one script for all its users: fine on one server, refused by a cluster
    (which is why the cluster reads them in two and writes each user alone)."""
    service = split_service(connections, server_settings, split_page=False)
    a, fan = uid("a"), uid("fan")
    await service.relations.follow(fan, a)
    if server_settings.redis.redis_cluster:
        with pytest.raises(RedisClusterException, match="same key slot"):
            await service.follow_pages.followers(a)
        return
    async with monitored(server_settings) as commands:
        await service.follow_pages.followers(a)
        await service.follow_pages.followers(a, viewer=Viewer(fan))
        await service.follow_pages.counts_for(a, Viewer(fan))
        await service.relations.follow(a, fan)
    crossing = await cross_slot(server_settings, commands)
    assert crossing, "the single-Redis page should read two slots in one script"
    redis = service.core.redis
    mirror, reads = redis.mirror, redis.mirror_reads
    assert {args[1] for args in crossing} == {reads._page.sha, reads._counts.sha, mirror._edges.sha}
