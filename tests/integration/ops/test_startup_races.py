"""Processes that start together on an empty database: an API and two workers, started at
once, three times over (twenty in `make test-slow`), each time on a Neo4j wiped of its data
and schema; every process must come up (the API's health answers, the workers run) every time. And, beneath them, the
schema applied by several coroutines at once, which makes the race between its creations
(and the deadlocks of its writes) happen at every round.

A throwaway Neo4j and redis-server of this module's own, as in ``test_fault_processes``: a
worker relays its Neo4j's outbox events into its own Redis, so it must not run on the shared
Neo4j with another Redis.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from graphsvc.adapters.neo4j.store import open_driver
from graphsvc.builders.stores import Neo4jAdapters
from graphsvc.ops.servers import processes
from graphsvc.settings import Settings
from tests.support.helpers import ThrowawayRedis, free_port, own_servers

pytestmark = [
    pytest.mark.faults,
    pytest.mark.skipif(
        not (shutil.which("java") and shutil.which("mvn") and shutil.which("redis-server")),
        reason="needs Java, Maven and redis-server",
    ),
]

ROUNDS = 3  # `make test`; `make test-slow` runs SLOW_ROUNDS
SLOW_ROUNDS = 20
START_TIMEOUT = 180.0  # three interpreters importing at once on a shared 2-core machine
RUNNING = b"graphsvc worker: running"


@dataclass
class Stack:
    settings: Settings
    env: dict[str, str]  # for `graphsvc` subprocesses
    redis: ThrowawayRedis
    logs: Path

    def wipe(self) -> None:
        """An empty database again: every constraint, index (but Neo4j's own lookup indexes)
        and node dropped; and an empty Redis."""
        neo4j = self.settings.neo4j
        auth = (neo4j.neo4j_user, neo4j.neo4j_password)
        with GraphDatabase.driver(neo4j.neo4j_uri, auth=auth) as driver:
            rules, _, _ = driver.execute_query("SHOW CONSTRAINTS YIELD name")
            for rule in rules:
                driver.execute_query(f"DROP CONSTRAINT `{rule['name']}`")
            indexes, _, _ = driver.execute_query(
                "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
            )
            for index in indexes:
                driver.execute_query(f"DROP INDEX `{index['name']}`")
            driver.execute_query("MATCH (n) DETACH DELETE n")
            (left,), _, _ = driver.execute_query(
                "SHOW INDEXES YIELD type WHERE type <> 'LOOKUP' RETURN count(*) AS n"
            )
            assert left["n"] == 0
        with self.redis.client() as client:
            client.flushall()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("startup-races")
    redis = ThrowawayRedis(base)
    settings, neo4j, env = own_servers(base, redis.url)
    env["API_WORKERS"] = "1"
    try:
        redis.start()
        neo4j.up(print)
        yield Stack(settings, env, redis, base)
    finally:
        redis.stop()
        neo4j.down(print)


@dataclass
class Started:
    """One round's processes: `graphsvc serve` and two `graphsvc worker`, and their logs."""

    api: processes.Process
    workers: list[processes.Process]
    logs: list[Path]
    url: str

    @classmethod
    def at_once(cls, stack: Stack, round_: int) -> Started:
        port = free_port()
        logs = [stack.logs / f"round{round_}-{name}.log" for name in ("api", "w1", "w2")]
        cli = [sys.executable, "-u", "-m", "graphsvc.ops.cli"]
        env = stack.env | {"API_PORT": str(port)}
        api = processes.spawn([*cli, "serve"], logs[0], env=env)
        workers = [processes.spawn([*cli, "worker"], log, env=env) for log in logs[1:]]
        return cls(api, workers, logs, f"http://127.0.0.1:{port}")

    def wait_until_up(self) -> None:
        """The API's health answers and both workers run; ``ProcessFailed`` with the logs
        when one of them exits first (or never gets there)."""
        healthy = functools.partial(processes.http_ok, f"{self.url}/healthz")
        processes.wait_until(healthy, START_TIMEOUT, "the API", self.api, logs=self.logs)
        for worker, log in zip(self.workers, self.logs[1:], strict=True):
            processes.wait_until(
                lambda log=log: RUNNING in log.read_bytes(),
                START_TIMEOUT,
                "a worker",
                worker,
                logs=self.logs,
            )
        for process in (self.api, *self.workers):
            if process.poll() is not None:
                raise processes.ProcessFailed(
                    f"exited with {process.returncode}\n{processes.tail(self.logs)}"
                )

    def stop(self) -> None:
        for worker in self.workers:
            processes.stop(worker)
        processes.stop(self.api, group=True)


def start_together(stack: Stack, rounds: int) -> None:
    failures: list[str] = []
    for round_ in range(rounds):
        stack.wipe()
        begun = time.monotonic()
        started = Started.at_once(stack, round_)
        try:
            started.wait_until_up()
            up = time.monotonic() - begun
        except processes.ProcessFailed as failed:
            failures.append(f"round {round_}: {failed}")
            up = None
        finally:
            started.stop()
        outcome = "failed" if up is None else f"all up in {up:.1f}s"
        print(f"[startup] round {round_}: {outcome}, stopped after {time.monotonic() - begun:.1f}s")
    assert not failures, f"{len(failures)} of {rounds} rounds failed:\n" + "\n\n".join(failures)


def test_an_api_and_two_workers_started_together_on_an_empty_database_all_come_up(
    stack: Stack,
) -> None:
    start_together(stack, ROUNDS)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # twenty rounds
def test_an_api_and_two_workers_started_together_twenty_times(stack: Stack) -> None:
    start_together(stack, SLOW_ROUNDS)


async def test_the_schema_applied_from_several_coroutines_at_once_on_an_empty_database(
    stack: Stack,
) -> None:
    settings = stack.settings.neo4j
    driver = open_driver(settings)
    try:
        for _ in range(5):
            stack.wipe()
            # four processes' stores, built as each process builds its own
            stores = [Neo4jAdapters(settings, driver, jobs=True).store for _ in range(4)]
            await asyncio.gather(*(store.apply_schema() for store in stores))
    finally:
        await driver.close()
