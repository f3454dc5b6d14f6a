"""Counts stay exact when nothing reads them after a commit: each change of a user's counts is
numbered in Neo4j under the user's lock, and the mirror adds it once, in that order. Storms of
follows, unfollows, blocks, unblocks and removals from several services (as from several
processes) reach Redis in any order; afterwards every mirrored count equals Neo4j's."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
from collections.abc import Awaitable, Callable, Sequence

from graphsvc.bootstrap import Services, open_services
from graphsvc.domain.errors import GraphError
from graphsvc.settings import Settings
from tests.support.helpers import ThrowawayRedis
from tests.support.run import assert_consistent
from tests.support.stores import relay_due

UserIds = Callable[[str], str]
OPS = 320


def storm(services: Sequence[Services], users: Sequence[str], seed: int) -> list[Awaitable[object]]:
    """Random writes among ``users``, spread over ``services``, and cold reads among them."""
    rng = random.Random(seed)
    calls: list[Awaitable[object]] = []
    for n in range(OPS):
        relations = services[n % len(services)].relations
        a, b = rng.sample(list(users), 2)
        roll = rng.random()
        if roll < 0.45:
            calls.append(relations.follow(a, b))
        elif roll < 0.7:
            calls.append(relations.unfollow(a, b))
        elif roll < 0.8:
            calls.append(relations.remove_followers(a, [b]))
        elif roll < 0.87:
            calls.append(relations.block(a, b))
        elif roll < 0.95:
            calls.append(relations.unblock(a, b))
        else:
            calls.append(services[n % len(services)].follow_pages.counts(a))
    return calls


async def answered(calls: Sequence[Awaitable[object]]) -> None:
    """Each call answered: a refusal (a block, a limit) is an answer; anything else fails."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    failures = [
        r for r in results if isinstance(r, BaseException) and not isinstance(r, GraphError)
    ]
    assert not failures, failures[:3]


async def mirrored_against_neo4j(backends: Services, users: Sequence[str]) -> int:
    """Compare every mirrored count with Neo4j's; returns how many users had counts mirrored."""
    truth = await backends.core.neo4j.snapshots.snapshots(users)
    mirrored = 0
    for user in users:
        counts = await backends.core.redis.mirror_reads.counts(user)
        if counts is None:
            continue
        mirrored += 1
        assert counts == truth[user].totals, user
    return mirrored


async def test_counts_stay_exact_under_a_storm_over_three_services(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    services = [make_service() for _ in range(3)]
    for seed in range(3):
        users = [uid(f"s{n}") for n in range(10)]
        for a, b in itertools.pairwise(users):  # a chain, so that unfollows remove
            await services[0].relations.follow(a, b)
        for user in users[::2]:  # warm counts and lists; the other half stays cold
            await services[0].follow_pages.counts(user)
            await services[0].follow_pages.followers(user)
        await backends.core.redis.mirror_builds.drop(users[1::2])
        await answered(storm(services, users, seed))
        for user in users:  # the cold ones are built now
            await services[1].follow_pages.counts(user)
        assert await mirrored_against_neo4j(backends, users) == len(users)
        await assert_consistent(backends, set(users))


async def test_counts_stay_exact_when_redis_restarts_in_a_storm(
    server_settings: Settings, throwaway_redis: ThrowawayRedis
) -> None:
    """Redis keeps its data (append-only file) but is killed mid-storm: the changes whose
    mirror writes failed are relayed, and the counts that waited behind them catch up."""
    throwaway_redis.persist = True
    throwaway_redis.stop()
    throwaway_redis.start()
    settings = throwaway_redis.settings(server_settings, "cs:", redis_retry_seconds=0.2)
    run = os.urandom(4).hex()
    users = [f"cs{run}.{n}" for n in range(10)]
    async with open_services(settings) as first, open_services(settings) as second:
        for a, b in itertools.pairwise(users):
            await first.relations.follow(a, b)
        for user in users:
            await first.follow_pages.counts(user)
        writes = asyncio.gather(*storm([first, second], users, seed=7), return_exceptions=True)
        await asyncio.sleep(0.05)
        throwaway_redis.kill9()
        throwaway_redis.start()
        results = await writes
        failures = [
            r for r in results if isinstance(r, BaseException) and not isinstance(r, GraphError)
        ]
        assert not failures, failures[:3]
        await asyncio.sleep(0.3)  # the breaker closes
        await relay_due(first)
        for user in users:
            await second.follow_pages.counts(user)
        assert await mirrored_against_neo4j(first, users) == len(users)
        await assert_consistent(first, set(users))
