"""What the Redis client must do alike on a single server and on a cluster: queue a burst of
callers instead of failing, and reload scripts a server lost (a restarted node)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from graphsvc.adapters.redis.client import Batch, open_redis
from graphsvc.bootstrap import Services
from graphsvc.settings import Settings
from tests.support.driver import Driver, user_ids, walk
from tests.support.run import assert_consistent

UserIds = Callable[[str], str]


async def test_a_burst_queues_for_a_small_pool(server_settings: Settings, uid: UserIds) -> None:
    settings = server_settings.with_values(redis_pool_size=2)
    client = open_redis(settings.redis)
    key = f"{settings.redis.redis_prefix}burst:{{{uid('burst')}}}"
    try:
        await asyncio.gather(*(client.incr(key) for _ in range(200)))
        batches = []
        for n in range(50):
            batch = Batch(client)
            batch.call(lambda pipe, n=n: pipe.sadd(f"{key}:{n}", n))
            batches.append(batch.execute())
        await asyncio.gather(*batches)
        assert await client.get(key) == "200"
        assert sum(await asyncio.gather(*(client.exists(f"{key}:{n}") for n in range(50)))) == 50
    finally:
        await client.delete(key, *(f"{key}:{n}" for n in range(50)))
        await client.aclose()


async def test_a_caller_waits_for_a_connection_at_most_the_pool_timeout(
    server_settings: Settings, uid: UserIds
) -> None:
    settings = server_settings.with_values(redis_pool_size=1, redis_pool_timeout=0.2)
    client = open_redis(settings.redis)
    key = f"{settings.redis.redis_prefix}held:{{{uid('held')}}}"
    try:
        held = asyncio.create_task(client.blpop([key], timeout=1))  # the only connection
        await asyncio.sleep(0.1)
        with pytest.raises(RedisConnectionError, match="No connection available"):
            await client.get(key)
        assert await held is None
        assert await client.get(key) is None  # released: the next caller gets it at once
    finally:
        await client.aclose()


async def test_scripts_lost_by_the_servers_are_loaded_again(
    driver: Driver, service: Services, backends: Services, uid: UserIds
) -> None:
    star, fans = uid("star"), [uid(f"fan{n}") for n in range(5)]
    await service.relations.follow(fans[0], star)
    await walk(driver.followers(star, page_size=2), 2)  # warm
    await backends.core.redis.client.script_flush()  # on a cluster: every primary
    for fan in fans[1:]:
        await service.relations.follow(fan, star)  # pipelined scripts
    await service.relations.unfollow(fans[0], star)
    await assert_consistent(backends, {star, *fans})  # the mirror writes were not lost
    await backends.core.redis.client.script_flush()
    assert user_ids(await walk(driver.followers(star, page_size=2), 2)) == fans[:0:-1]
    await backends.core.redis.client.script_flush()
    await backends.core.redis.mirror_builds.drop([star])
    await service.core.mirror_sync.rebuild([star])  # the bulk path
    assert (await service.follow_pages.counts(star)).followers == 4
