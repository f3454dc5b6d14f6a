"""The Neo4j driver and the Redis client (a pool each) a process opens once and shares
with everything it builds. Redis may be down at the start: the reads fall back to Neo4j until
it answers; a Neo4j out of reach fails the start."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from neo4j import AsyncDriver

from graphsvc.adapters.neo4j.store import open_driver
from graphsvc.adapters.redis.client import REDIS_DOWN, Client, open_redis
from graphsvc.adapters.redis.multiplexed import Multiplexed
from graphsvc.settings import Neo4jSettings, RedisSettings

__all__ = ["Connections", "Driver"]

log = logging.getLogger(__name__)

Driver = AsyncDriver


@dataclass(frozen=True, slots=True)
class Connections:
    """The Neo4j driver and the Redis client (a pool each), shared by everything built;
    ``multiplexed``: the multiplexed connections of the reads every request makes (``multiplexed.py``;
    None on a cluster, where the pool serves them too)."""

    driver: Driver
    redis: Client
    multiplexed: Multiplexed | None = None

    @classmethod
    @asynccontextmanager
    async def open(cls, neo4j: Neo4jSettings, redis: RedisSettings) -> AsyncIterator[Connections]:
        driver = open_driver(neo4j)
        client = open_redis(redis)
        multiplexed = Multiplexed.for_settings(redis)
        try:
            await driver.verify_connectivity()
            try:
                await client.ping()
            except REDIS_DOWN as exc:  # served from Neo4j until it answers
                log.warning("redis does not answer at start-up (%s)", exc)
            yield cls(driver, client, multiplexed)
        finally:
            if multiplexed is not None:
                await multiplexed.aclose()
            await client.aclose()
            await driver.close()
