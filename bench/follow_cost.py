"""Neo4j's CPU per follow and per unfollow, through the service in this process (no HTTP):
16 at a time, random pairs of the loaded bench graph, each followed and then unfollowed (the
graph is left as it was). Run it against the bench's servers from two checkouts, alternated,
to compare the write path's cost in Neo4j on a machine whose speed drifts.

    python -m bench.follow_cost --pairs 4000 --seed 5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable

from bench.proc_cpu import cpu_seconds, listener
from graphsvc.bootstrap import open_services
from graphsvc.domain.errors import GraphError
from graphsvc.settings import Settings

NEO4J_PORT, REDIS_PORT = 27687, 26379  # the bench's own servers (bench/run.py)
USERS = 200_000  # the S graph's ids
AT_ONCE = 16


async def _timed(
    neo4j_pid: int, calls: list[Callable[[], Awaitable[object]]]
) -> tuple[float, float]:
    """(operations per second, Neo4j CPU microseconds per operation)."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(call: Callable[[], Awaitable[object]]) -> None:
        async with gate:
            with contextlib.suppress(GraphError):  # a refusal is an answer
                await call()

    cpu, began = cpu_seconds(neo4j_pid), time.monotonic()
    await asyncio.gather(*(one(call) for call in calls))
    took = time.monotonic() - began
    return len(calls) / took, 1e6 * (cpu_seconds(neo4j_pid) - cpu) / len(calls)


async def main(pairs: int, seed: int) -> None:
    pid = listener(NEO4J_PORT)
    if pid is None:
        raise SystemExit(f"no Neo4j listens on {NEO4J_PORT}: start the bench's servers first")
    settings = Settings(
        neo4j_uri=f"bolt://127.0.0.1:{NEO4J_PORT}",
        redis_url=f"redis://127.0.0.1:{REDIS_PORT}/0",
        rate_limits_enabled=False,
    )
    rng = random.Random(seed)
    chosen = [(str(rng.randrange(USERS)), str(rng.randrange(USERS))) for _ in range(pairs)]
    chosen = [(a, b) for a, b in chosen if a != b]
    async with open_services(settings) as services:
        relations = services.relations
        for name, write in (("follow", relations.follow), ("unfollow", relations.unfollow)):
            calls = [lambda a=a, b=b, write=write: write(a, b) for a, b in chosen]
            rate, neo4j_us = await _timed(pid, calls)
            print(f"{name}: {rate:,.0f}/s, Neo4j {neo4j_us:,.0f} us per {name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.pairs, options.seed))
