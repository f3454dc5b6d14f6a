"""The load generator: runs in its own process, one scenario at a time, loopback only.

A scenario is one way of answering one question (a followers page through the API, the same
page by Cypher, by a raw Redis command...). It runs with a fixed number of concurrent workers
until its time or its request budget is spent, and reports every latency it saw.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import asyncpg
import neo4j
import orjson

from bench import postgres, write_costs
from graphsvc.adapters.neo4j.pages import NEWEST
from graphsvc.adapters.neo4j.queries import query
from graphsvc.adapters.neo4j.store import open_driver
from graphsvc.adapters.redis.client import open_redis
from graphsvc.api.app import settle_the_heap
from graphsvc.bootstrap import Connections, build
from graphsvc.domain.access import VIEWER_HEADER
from graphsvc.domain.privacy import PrivacyEdit
from graphsvc.settings import Settings

Op = Callable[[int], Awaitable[Any]]


@dataclass
class Scenario:
    name: str
    kind: str
    user: str = ""
    concurrency: int = 8
    seconds: float = 4.0
    max_requests: int = 50_000
    warmup: int = 200
    settings: dict[str, Any] = field(default_factory=dict)
    api_url: str = ""
    api_key: str = ""  # sent as Authorization: Bearer (every /v1 route needs one)
    viewer: str = ""  # sent as X-Graph-Viewer: the user the reads are made for
    postgres_dsn: str = ""  # the relational baseline's server (bench.postgres)
    targets: list[str] = field(default_factory=list)
    run_id: str = ""
    timeout: float = 10.0  # seconds, for queries that may not finish (naive_suggest)


@dataclass
class Outcome:
    name: str
    requests: int
    errors: int
    seconds: float
    latencies_us: list[float]


async def _drive(op: Op, scenario: Scenario) -> Outcome:
    counter = itertools.count()
    for n in range(scenario.warmup):
        await op(-1 - n)
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + scenario.seconds

    async def worker() -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            n = next(counter)
            if n >= scenario.max_requests:
                return
            started = time.perf_counter_ns()
            try:
                await op(n)
            except Exception:
                errors += 1
                continue
            latencies.append((time.perf_counter_ns() - started) / 1000)

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(scenario.concurrency)))
    elapsed = time.perf_counter() - began
    return Outcome(scenario.name, len(latencies), errors, elapsed, latencies)


SETUP_CONCURRENCY = 64  # follows in flight while the approval row's requests are made


def requester_ids(run_id: str, count: int) -> list[str]:
    """The users whose requests the approval row approves: new each run."""
    return [f"bq{run_id}.req.{k}" for k in range(count)]


async def _pending_requests(settings: Settings, owner: str, requesters: list[str]) -> None:
    """Lock ``owner`` and make each requester's follow of it a pending request, through the
    service in this process, before the row's clock starts: the row then measures the
    approvals alone."""
    driver = open_driver(settings.neo4j)
    client = open_redis(settings.redis)
    try:
        services = build(settings, Connections(driver, client))
        await services.privacy.update(owner, PrivacyEdit(locked=True))
        bound = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def ask(requester: str) -> None:
            async with bound:
                result = await services.relations.follow(requester, owner)
            if not result.requested:
                raise RuntimeError(f"{requester} -> {owner}: not a pending request")

        await asyncio.gather(*(ask(requester) for requester in requesters))
    finally:
        await client.aclose()
        await driver.close()


async def _run(scenario: Scenario) -> Outcome:
    settings = Settings(**scenario.settings)
    kind, user = scenario.kind, scenario.user
    closers: list[Callable[[], Awaitable[Any]]] = []
    try:
        if kind.startswith("api_"):
            # aiohttp's C parser keeps the client's share of the CPU small
            headers = {"Authorization": f"Bearer {scenario.api_key}"}
            if scenario.viewer:
                headers[VIEWER_HEADER] = scenario.viewer
            http = aiohttp.ClientSession(
                base_url=scenario.api_url,
                connector=aiohttp.TCPConnector(limit=scenario.concurrency),
                headers=headers,
            )
            closers.append(http.close)

            async def call(method: str, path: str) -> None:
                async with http.request(method, path) as response:
                    await response.read()
                    if response.status >= 400:
                        raise RuntimeError(f"{method} {path}: {response.status}")

            if kind == "api_page":
                op: Op = lambda n: call("GET", f"/v1/users/{user}/followers?limit=20")  # noqa: E731
            elif kind == "api_count":
                op = lambda n: call("GET", f"/v1/users/{user}/counts")  # noqa: E731
            elif kind == "api_interactions":  # batches of 100 events among the targets
                rng = random.Random(11)
                kinds = ["message", "comment", "like", "profile_visit"]
                stamp = datetime.now(UTC).isoformat()

                async def op(n: int) -> None:
                    batch = []
                    for _ in range(100):
                        actor, target = rng.sample(scenario.targets, 2)
                        kind = rng.choice(kinds)
                        batch.append({"actor": actor, "target": target, "kind": kind, "at": stamp})
                    async with http.post("/v1/interactions", json=batch) as response:
                        await response.read()
                        if response.status != 202:
                            raise RuntimeError(f"interactions: {response.status}")

            elif kind == "api_get":  # targets: the paths asked, in turn
                op = lambda n: call("GET", scenario.targets[n % len(scenario.targets)])  # noqa: E731
            elif kind == "api_post":  # targets: a path and the JSON body posted to it
                path, body = scenario.targets[0], orjson.loads(scenario.targets[1])

                async def op(n: int) -> None:
                    async with http.post(path, json=body) as response:
                        await response.read()
                        if response.status >= 400:
                            raise RuntimeError(f"POST {path}: {response.status}")

            elif kind == "api_relationships":  # user: the viewer; targets: the ids asked about
                path = f"/v1/users/{user}/relationships?ids={','.join(scenario.targets)}"
                op = lambda n: call("GET", path)  # noqa: E731
            elif kind == "api_familiar":  # user: the viewer; targets[0]: the followed user
                path = f"/v1/users/{user}/familiar-followers/{scenario.targets[0]}?limit=3"
                op = lambda n: call("GET", path)  # noqa: E731
            elif kind == "api_common_followers":  # of user and targets[0]
                path = f"/v1/users/{user}/common-followers/{scenario.targets[0]}?limit=20"
                op = lambda n: call("GET", path)  # noqa: E731
            elif kind == "api_approve":  # user: a locked owner; each request approves one
                requesters = requester_ids(scenario.run_id, scenario.warmup + scenario.max_requests)
                await _pending_requests(settings, user, requesters)

                async def op(n: int) -> None:
                    requester = requesters[n + scenario.warmup]  # warm-up: n = -1, -2, ...
                    path = f"/v1/users/{user}/follow-requests/{requester}"
                    async with http.put(path) as response:
                        body = await response.read()
                        if response.status != 200 or not orjson.loads(body)["created"]:
                            raise RuntimeError(f"approve {requester}: {response.status} {body!r}")

            else:  # api_follow
                rng = random.Random(7)

                async def op(n: int) -> None:
                    src = f"bw{scenario.run_id}.api.{n}"
                    await call("PUT", f"/v1/users/{src}/following/{rng.choice(scenario.targets)}")

        elif kind == "naive_suggest":  # the textbook *2..3 query, with a timeout
            driver = open_driver(settings.neo4j)
            closers.append(driver.close)
            naive = neo4j.Query(query("baselines/naive_suggestions"), timeout=scenario.timeout)

            async def op(n: int) -> None:
                who = scenario.targets[n % len(scenario.targets)]
                async with driver.session(database=settings.neo4j.neo4j_database) as session:
                    await (await session.run(naive, {"id": who})).consume()

        elif kind in ("suggest_compute", "suggest_cached"):  # in process (no HTTP)
            driver = open_driver(settings.neo4j)
            client = open_redis(settings.redis)
            closers += [driver.close, client.aclose]
            suggestions = build(settings, Connections(driver, client)).suggestions
            if kind == "suggest_compute":  # the queries and the ranker, no cache

                async def op(n: int) -> None:
                    await suggestions.compute(scenario.targets[n % len(scenario.targets)])

            else:  # a cache hit (warmed first), with the impressions' re-rank
                for who in scenario.targets:
                    await suggestions.suggestions(who, 10)

                async def op(n: int) -> None:
                    await suggestions.suggestions(scenario.targets[n % len(scenario.targets)], 10)

        elif kind in ("suggest_cold", "suggest_similar"):  # in process (no HTTP)
            driver = open_driver(settings.neo4j)
            client = open_redis(settings.redis)
            closers += [driver.close, client.aclose]
            services = build(settings, Connections(driver, client))
            if kind == "suggest_cold":  # a new user each time: the fill, no cache
                # the lists a worker's round makes
                await services.background.cold_start_charts.refresh()
                prefix = scenario.targets[0]

                async def op(n: int) -> None:
                    await services.suggestions.compute(f"{prefix}.{n}")

            else:  # users asking for the accounts similar to one seed

                async def op(n: int) -> None:
                    who = scenario.targets[n % len(scenario.targets)]
                    await services.similar.similar(who, user, 10)

        elif kind.startswith("cypher_") or kind in ("neo4j_follow", "service_follow"):
            driver = open_driver(settings.neo4j)
            closers.append(driver.close)
            params = {"database_": settings.neo4j.neo4j_database, "bookmark_manager_": None}
            if kind == "cypher_page":
                text = query("pages/followers_page")

                async def op(n: int) -> None:
                    await driver.execute_query(
                        text, {"id": user, "since": NEWEST, "after": "", "limit": 20}, **params
                    )

            elif kind == "cypher_count":
                text = query("baselines/follower_count")

                async def op(n: int) -> None:
                    await driver.execute_query(text, {"id": user}, **params)

            elif kind == "neo4j_follow":  # batched as the service batches (group commit)
                group = write_costs.follow_only(driver, settings)
                rng = random.Random(7)

                async def op(n: int) -> None:
                    src = f"bw{scenario.run_id}.neo4j.{n}"
                    await group.submit((src, rng.choice(scenario.targets)))

            else:  # service_follow: Neo4j then the mirror, in process (no HTTP)
                client = open_redis(settings.redis)
                closers.append(client.aclose)
                relations = build(settings, Connections(driver, client)).relations
                rng = random.Random(7)

                async def op(n: int) -> None:
                    await relations.follow(
                        f"bw{scenario.run_id}.svc.{n}", rng.choice(scenario.targets)
                    )

        elif kind == "redis_page":
            client = open_redis(settings.redis)
            closers.append(client.aclose)
            key = f"{settings.redis.redis_prefix}r:{{{user}}}"

            async def op(n: int) -> None:
                await client.zrange(
                    key, "+inf", "-inf", byscore=True, desc=True, offset=0, num=20, withscores=True
                )

        elif kind == "redis_count":  # the mirror's count read, without HTTP
            client = open_redis(settings.redis)
            closers.append(client.aclose)
            key = f"{settings.redis.redis_prefix}m:{{{user}}}"

            async def op(n: int) -> None:
                await client.hmget(key, "fr", "fg")

        elif kind.startswith("pg_"):  # the relational baseline, a server over loopback too
            pool = await asyncpg.create_pool(
                scenario.postgres_dsn, min_size=scenario.concurrency, max_size=scenario.concurrency
            )
            closers.append(pool.close)
            if kind == "pg_count":  # count(*) over the followee index

                async def op(n: int) -> None:
                    await postgres.follower_count(pool, user)

            elif kind == "pg_count_table":  # the counts row kept by every follow

                async def op(n: int) -> None:
                    await postgres.counts(pool, user)

            elif kind == "pg_page":  # the first page, keyset from the newest

                async def op(n: int) -> None:
                    await postgres.page(pool, user, 20)

            elif kind == "pg_page_walk":  # each worker walks the list page by page, then again
                after = [postgres.NEWEST] * scenario.concurrency

                async def op(n: int) -> None:
                    slot = n % scenario.concurrency
                    rows = await postgres.page(pool, user, 20, after[slot])
                    after[slot] = (rows[-1][1], rows[-1][0]) if rows else postgres.NEWEST

            elif kind == "pg_follow":  # the edge and, when new, both counters: one transaction
                rng = random.Random(7)

                async def op(n: int) -> None:
                    src = f"bw{scenario.run_id}.pg.{n}"
                    since = time.time_ns() // 1000
                    await postgres.follow(pool, src, rng.choice(scenario.targets), since)

            else:
                raise ValueError(f"unknown scenario kind {kind}")

        else:
            raise ValueError(f"unknown scenario kind {kind}")
        # What the scenario built (in-process services included) out of the collector's
        # sight, as an API process does after its start-up: the rows time the service, not
        # full collections of this process's libraries.
        settle_the_heap()
        return await _drive(op, scenario)
    finally:
        for close in closers:
            await close()


def run(scenario: Scenario) -> Outcome:
    """Entry point in the load-generator process."""
    return asyncio.run(_run(scenario))
