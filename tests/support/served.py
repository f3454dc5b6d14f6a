"""A served stack for the tests that kill and restart real processes: `graphsvc serve` (its
uvicorn workers) with a `graphsvc worker` beside it, as deployed, and what such tests ask of it
over HTTP (readiness, figures of answers)."""

from __future__ import annotations

import asyncio
import collections
import functools
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx
from neo4j import GraphDatabase, Query

from graphsvc.ops.servers import processes
from graphsvc.settings import Settings
from tests.support.helpers import bearer, free_port, start_worker, stop_process

START_TIMEOUT = 120.0  # a shared 2-core machine: processes take their time
# How long a store that has just come back may take before the service says it is ready:
# a Neo4j's recovery and its plans made again, on a slow day.
READY_TIMEOUT = 180.0
# The environment of `graphsvc` processes under a fault test: the relay and the retries on a
# short clock, so a test sees a store's loss and its repair within seconds; no budgets (the
# loads send more than a key's).
FAULT_ENV = {
    "OUTBOX_GRACE_SECONDS": "1",
    "OUTBOX_RELAY_SECONDS": "1",
    "REDIS_RETRY_SECONDS": "1",
    "NEO4J_RETRY_SECONDS": "2",
    "NEO4J_CONNECT_TIMEOUT": "1",
    "FOLLOWS_PER_DAY": "1000000",
    "RATE_LIMITS_ENABLED": "0",
}


class ApiProcess:
    """`python -m graphsvc.ops.cli serve` in its own process group (uvicorn and its workers),
    and a `graphsvc worker` beside it; both start and stop together."""

    def __init__(self, env: dict[str, str], log: Path, workers: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = env | {"API_PORT": str(self.port), "API_WORKERS": str(workers)}
        self.process: processes.Process | None = None
        self.worker: processes.Process | None = None

    def start(self) -> None:
        self.worker = start_worker(self.env, self.log.with_suffix(".worker.log"))
        cmd = [sys.executable, "-m", "graphsvc.ops.cli", "serve"]
        self.process = processes.spawn(cmd, self.log, env=self.env)
        answers = functools.partial(processes.http_ok, f"{self.url}/healthz")
        processes.wait_until(answers, START_TIMEOUT, "the API", self.process, logs=[self.log])

    def wait_ready(self, seconds: float = READY_TIMEOUT) -> float:
        """Poll ``/readyz`` (as a load balancer does) until it answers 200 from a new
        connection each time, so every uvicorn worker is asked in turn; the seconds it took."""
        started = time.monotonic()
        logs = [self.log, self.log.with_suffix(".worker.log")]

        def ready() -> bool:
            return all(processes.http_ok(f"{self.url}/readyz") for _ in range(4))

        processes.wait_until(ready, seconds, "the API's readiness", self.process, logs=logs)
        return time.monotonic() - started

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        worker, self.worker = self.worker, None
        stop_process(worker)
        process, self.process = self.process, None
        processes.stop(process, group=True)  # the group: uvicorn and its workers


async def until_ready(http: httpx.AsyncClient, seconds: float = READY_TIMEOUT) -> float:
    """Poll ``/readyz`` of an app until it answers 200 (every other answer must be a clean
    503 with Retry-After); the seconds it took."""
    started = time.monotonic()
    while True:
        response = await http.get("/readyz")
        if response.status_code == 200:
            return time.monotonic() - started
        assert response.status_code == 503 and response.headers.get("retry-after"), response.text
        assert time.monotonic() - started < seconds, (
            f"not ready within {seconds:g}s: {response.text}"
        )
        await asyncio.sleep(0.2)


def new_connections(url: str, key: str) -> httpx.Client:
    """A client without keep-alive: every request is a new connection, so every uvicorn
    worker gets requests."""
    limits = httpx.Limits(max_keepalive_connections=0)
    return httpx.Client(base_url=url, timeout=30, limits=limits, headers=bearer(key))


@dataclass
class Read:
    path: str
    start: float
    end: float
    status: int | None
    source: str | None  # X-Graph-Source
    error: str = ""  # the body of an error


def send_read(http: httpx.Client, path: str, params: dict[str, int] | None = None) -> Read:
    """One GET, with its timing, status, X-Graph-Source and (if not a 200) the error body."""
    start = time.monotonic()
    try:
        response = http.get(path, params=params or {})
        status, source = response.status_code, response.headers.get("x-graph-source")
        error = "" if status == 200 else response.text[:300]
    except httpx.TransportError as exc:
        status, source, error = None, None, repr(exc)
    return Read(path, start, time.monotonic(), status, source, error)


class Answer(Protocol):
    start: float
    end: float
    status: int | None


def status_table(items: Iterable[Answer], where: Callable[[Answer], bool] = lambda _: True) -> str:
    """Statuses and latencies (median / max) of answers, e.g. ``{200: 51} 12/340 ms``."""
    chosen = [item for item in items if where(item)]
    if not chosen:
        return "{}"
    took = sorted(item.end - item.start for item in chosen)
    statuses = dict(collections.Counter(item.status for item in chosen))
    return f"{statuses} {took[len(took) // 2] * 1000:.0f}/{took[-1] * 1000:.0f} ms"


def cypher(settings: Settings, text: str, **params: object) -> list[dict]:
    """One statement against the Neo4j of ``settings``, from a driver of its own."""
    auth = (settings.neo4j.neo4j_user, settings.neo4j.neo4j_password)
    # bounded: a poll that asks again must not wait on one statement for good
    statement = Query(text, timeout=60)  # type: ignore[arg-type]
    with GraphDatabase.driver(settings.neo4j.neo4j_uri, auth=auth, connection_timeout=5) as driver:
        records, _, _ = driver.execute_query(statement, params, database_="neo4j")
    return [record.data() for record in records]
