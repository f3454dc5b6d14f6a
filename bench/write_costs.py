"""Where a follow's cost goes: the write path's cost table, in process (no HTTP), against the
bench's loaded servers.

Three sides, each 16 at a time from new followers to the bench's targets: Neo4j alone doing
the same lock, clock tick, existence check and edge, batched the way the service batches
(``baselines/follow_only``); the service's follows (rules, outbox event, numbered counts,
mirror); and the service's unfollows of those follows (the graph is left as it was). For each:
the rate, the latency, and the CPU per write of each process: this one (the service's Python
and its drivers), Neo4j, Redis and, when it is named, a worker beside them. For the service,
what its batches spend per step (``graphsvc_write_batch_seconds``: the wait for the users'
in-process locks, the Neo4j transaction, the mirror round trip), their
size, and the deadlock victims; and the database hits of one batch's statements against
``follow_only``'s (PROFILE, rolled back).

    python -m bench.write_costs [--follows 4000] [--worker-pid PID]

``make bench`` runs it beside the API's worker.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import neo4j
from prometheus_client import REGISTRY

from bench.proc_cpu import cpu_seconds, listener
from graphsvc.adapters.neo4j.queries import query, with_prelude
from graphsvc.adapters.neo4j.relations import commit_rounds, event_ids_for
from graphsvc.bootstrap import open_services
from graphsvc.concurrency.group_commit import GroupCommit
from graphsvc.concurrency.keyed_lock import KeyedLock
from graphsvc.domain.edge_writes import EdgeWrite, WriteKind
from graphsvc.domain.errors import GraphError
from graphsvc.settings import Settings

NEO4J_PORT, REDIS_PORT = 27687, 26379  # the bench's own servers (bench/run.py)
AT_ONCE = 16
STEPS = ("locks", "neo4j", "mirror")


@dataclass(frozen=True)
class Side:
    name: str
    per_second: float
    p50_ms: float
    p99_ms: float
    cpu_us: dict[str, float]  # process -> CPU microseconds per write
    steps_ms: dict[str, float]  # step -> mean milliseconds per batch (the service's)
    batch: float  # mean writes per batch (the service's)
    victims: int  # deadlock victims during the side


def targets(users: int) -> list[str]:
    """The bench's follow targets, for a graph of ``users`` ids: the ten most followed users
    three times over, and every 97th user."""
    return [str(n) for n in range(10)] * 3 + [str(n) for n in range(0, users, 97)]


def follow_only(
    driver: neo4j.AsyncDriver, settings: Settings
) -> GroupCommit[tuple[str, str], bool]:
    """Neo4j alone, batched the way the service batches: its group commit, its in-process
    locks of every user of a batch, one ``baselines/follow_only`` statement per batch, sent as
    the service sends a batch of follows (an auto-commit transaction)."""
    text = query("baselines/follow_only")
    locks = KeyedLock()
    database = settings.neo4j.neo4j_database

    async def commit(batch: list[tuple[str, str]]) -> list[bool]:
        async with locks.hold_all(*{user for pair in batch for user in pair}):
            rows = [{"src": s, "dst": d} for s, d in sorted(batch)]
            async with driver.session(
                database=database, default_access_mode=neo4j.WRITE_ACCESS, bookmark_manager=None
            ) as session:
                result = await session.run(text, {"rows": rows})
                records = [record async for record in result]
        changed = {record["src"]: record["changed"] for record in records}
        return [changed[src] for src, _ in batch]

    return GroupCommit(
        commit,
        window_ms=settings.writes.write_batch_window_ms,
        max_size=settings.writes.write_batch_max,
        concurrency=settings.writes.write_batch_concurrency,
    )


def _metric(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def _batch_figures() -> dict[str, float]:
    figures = {
        f"{step}_sum": _metric("graphsvc_write_batch_seconds_sum", {"step": step}) for step in STEPS
    }
    figures["batches"] = _metric("graphsvc_write_batch_writes_count")
    figures["writes"] = _metric("graphsvc_write_batch_writes_sum")
    figures["victims"] = _metric("graphsvc_deadlock_victims_total")
    return figures


async def _side(
    name: str, calls: list[Callable[[], Awaitable[object]]], pids: dict[str, int]
) -> Side:
    gate = asyncio.Semaphore(AT_ONCE)
    took: list[float] = []

    async def one(call: Callable[[], Awaitable[object]]) -> None:
        async with gate:
            began = time.perf_counter()
            with contextlib.suppress(GraphError):  # a refusal is an answer
                await call()
            took.append(time.perf_counter() - began)

    cpu = {tier: cpu_seconds(pid) for tier, pid in pids.items()}
    own, figures, began = time.process_time(), _batch_figures(), time.monotonic()
    await asyncio.gather(*(one(call) for call in calls))
    seconds = time.monotonic() - began
    used = {tier: cpu_seconds(pid) - cpu[tier] for tier, pid in pids.items()}
    used = {"this process": time.process_time() - own, **used}
    after = _batch_figures()
    batches = after["batches"] - figures["batches"]
    ordered = sorted(took)
    return Side(
        name,
        len(calls) / seconds,
        1e3 * ordered[len(ordered) // 2],
        1e3 * ordered[int(len(ordered) * 0.99)],
        {tier: 1e6 * spent / len(calls) for tier, spent in used.items()},
        {step: 1e3 * (after[f"{step}_sum"] - figures[f"{step}_sum"]) / batches for step in STEPS}
        if batches
        else {},
        (after["writes"] - figures["writes"]) / batches if batches else 0.0,
        int(after["victims"] - figures["victims"]),
    )


def _db_hits(plan: Any) -> int:
    return int(plan.get("dbHits", 0)) + sum(_db_hits(child) for child in plan.get("children", []))


async def statement_hits(
    driver: neo4j.AsyncDriver, database: str, follows: int, tag: str, users: int = 200_000
) -> dict[str, float]:
    """Database hits per follow of one batch of ``follows`` new follows: each statement the
    service sends, and ``follow_only``'s; PROFILE'd in transactions that are rolled back."""
    rng = random.Random(3)
    chosen = targets(users)
    batch = [
        EdgeWrite(WriteKind.FOLLOW, f"bwc{tag}.p{n}", rng.choice(chosen)) for n in range(follows)
    ]
    hits: dict[str, float] = {}
    async with driver.session(database=database) as session:
        tx = await session.begin_transaction()

        async def run(name: str, params: Any, prelude: str | None = None) -> list[Any]:
            text = with_prelude(prelude, name) if prelude else query(name)
            result = await tx.run("PROFILE " + text, params)
            records = [record async for record in result]
            summary = await result.consume()
            label = f"{prelude} + {name}" if prelude else name
            hits[label] = _db_hits(summary.profile) / follows
            return records

        await commit_rounds(run, batch, event_ids_for(batch))
        await tx.rollback()
        tx = await session.begin_transaction()
        rows = [{"src": w.src, "dst": w.dst} for w in sorted(batch, key=lambda w: w.src)]
        result = await tx.run("PROFILE " + query("baselines/follow_only"), {"rows": rows})
        _ = [record async for record in result]
        hits["baselines/follow_only"] = _db_hits((await result.consume()).profile) / follows
        await tx.rollback()
    return hits


async def measure(
    settings: Settings, follows: int, worker_pid: int | None = None, users: int = 200_000
) -> tuple[list[Side], dict[str, float]]:
    """The three sides, and the statements' database hits."""
    pids = {"Neo4j": listener(NEO4J_PORT), "Redis": listener(REDIS_PORT), "worker": worker_pid}
    live = {tier: pid for tier, pid in pids.items() if pid is not None}
    tag = str(int(time.time()))
    rng = random.Random(7)
    chosen = targets(users)
    pairs = [(f"bwc{tag}.f{n}", rng.choice(chosen)) for n in range(follows)]
    settings = settings.with_values(rate_limits_enabled=False, follows_per_day=10**9)
    async with open_services(settings) as services:
        relations = services.relations
        driver = services.core.neo4j.store.driver
        alone = follow_only(driver, settings)
        sides = [
            await _side(
                "Neo4j alone (follow_only)",
                [
                    lambda n=n: alone.submit((f"bwc{tag}.o{n}", rng.choice(chosen)))
                    for n in range(follows)
                ],
                live,
            ),
            await _side(
                "service follow",
                [lambda a=a, b=b: relations.follow(a, b) for a, b in pairs],
                live,
            ),
            await _side(
                "service unfollow",
                [lambda a=a, b=b: relations.unfollow(a, b) for a, b in pairs],
                live,
            ),
        ]
        hits = await statement_hits(driver, settings.neo4j.neo4j_database, AT_ONCE, tag, users)
    return sides, hits


def table(sides: list[Side], hits: dict[str, float]) -> list[str]:
    """The cost table, as lines."""
    tiers = sorted({tier for side in sides for tier in side.cpu_us}, key=_tier_order)
    lines = [
        "side | writes/s | p50 ms | p99 ms | CPU µs per write: "
        + ", ".join(tiers)
        + " | per batch: writes, "
        + ", ".join(f"{step} ms" for step in STEPS)
        + ", deadlock victims"
    ]
    for side in sides:
        cpu = ", ".join(f"{side.cpu_us.get(tier, 0):,.0f}" for tier in tiers)
        steps = ", ".join(f"{side.steps_ms.get(step, 0):.2f}" for step in STEPS)
        per_batch = f"{side.batch:.1f}, {steps}, {side.victims}" if side.steps_ms else "-"
        lines.append(
            f"{side.name} | {side.per_second:,.0f} | {side.p50_ms:.1f} | {side.p99_ms:.1f} | "
            f"{cpu} | {per_batch}"
        )
    lines += [f"db hits per follow, {name}: {value:,.0f}" for name, value in hits.items()]
    return lines


def _tier_order(tier: str) -> int:
    order = ("this process", "Neo4j", "Redis", "worker")
    return order.index(tier) if tier in order else len(order)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--follows", type=int, default=4_000)
    parser.add_argument("--worker-pid", type=int, default=None)
    options = parser.parse_args()
    bench_settings = Settings(
        neo4j_uri=f"bolt://127.0.0.1:{NEO4J_PORT}", redis_url=f"redis://127.0.0.1:{REDIS_PORT}/0"
    )
    found, db_hits = asyncio.run(measure(bench_settings, options.follows, options.worker_pid))
    print("\n".join(table(found, db_hits)))
