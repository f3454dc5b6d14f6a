"""Small helpers shared by the HTTP tests."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis
from fastapi import FastAPI

from graphsvc.bootstrap import open_services
from graphsvc.domain.access import ALL_SCOPES
from graphsvc.ops.servers import processes
from graphsvc.ops.servers.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, Settings

_LOGS = Path(
    tempfile.mkdtemp(prefix="graphsvc-test-processes-")
)  # the logs of this test run's processes


def bearer(key: str) -> dict[str, str]:
    """The header that sends an API key."""
    return {"Authorization": f"Bearer {key}"}


class AppClient(httpx.AsyncClient):
    """An HTTP client for an ASGI app in this process; ``app`` is that app."""

    def __init__(self, app: FastAPI, key: str | None, *, raise_app_exceptions: bool = True) -> None:
        super().__init__(
            transport=httpx.ASGITransport(app=app, raise_app_exceptions=raise_app_exceptions),
            base_url="http://graphsvc",
            headers=bearer(key) if key else {},
        )
        self.app = app


def app_client(app: FastAPI, key: str | None) -> AppClient:
    """An HTTP client for an ASGI app in this process, sending ``key`` (None: no key)."""
    return AppClient(app, key)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sync_redis(settings: Settings, **options: object) -> redis.Redis | redis.RedisCluster:
    """A blocking client of the servers' Redis; on a cluster, one that routes each key to its
    node and scans every primary."""
    if settings.redis.redis_cluster:
        return redis.RedisCluster.from_url(settings.redis.redis_url, **options)
    return redis.Redis.from_url(settings.redis.redis_url, **options)


class ThrowawayRedis:
    """A redis-server of our own: no RDB, no AOF, so a restart after SIGKILL is empty (unless
    it is told to persist)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.dir = directory
        self.process: processes.Process | None = None
        self.persist = False  # keep the data across a restart (an append-only file, fsync'd)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(
            port=self.port, decode_responses=True, socket_connect_timeout=2, socket_timeout=30
        )

    def start(self) -> None:
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        cmd += ["--save", "", "--dir", str(self.dir)]
        cmd += ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else []
        cmd += [] if self.persist else ["--appendonly", "no"]
        log = self.dir / "redis.log"
        self.process = processes.spawn(cmd, log)
        processes.wait_until(self._answers, 120, "redis-server", self.process, logs=[log])

    def _answers(self) -> bool:
        try:
            with self.client() as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill9()

    def settings(self, shared: Settings, prefix: str, **values: object) -> Settings:
        """The suite's settings over this Redis, under a key prefix of the test's own."""
        return shared.with_values(
            redis_url=self.url,
            redis_cluster=False,
            redis_prefix=prefix,
            rate_limits_enabled=False,
            **values,
        )


def own_servers(
    base: Path, redis_url: str, **values: object
) -> tuple[Settings, LocalNeo4j, dict[str, str]]:
    """A Neo4j of the test's own (a free port, a small heap, its state under ``base``) beside
    a Redis of its own at ``redis_url``: the settings over both, the Neo4j to start, and the
    environment of `graphsvc` processes over them (the key secret keys are made under)."""
    settings = Settings(
        neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
        redis_url=redis_url,
        redis_cluster=False,  # a redis-server of its own, also under make test-cluster
        **values,
    )
    local = LocalServerSettings(
        state_dir=base / "state",
        neo4j_heap="512m",
        neo4j_pagecache="128m",
        neo4j_start_timeout=180.0,
    )
    env = {
        **os.environ,
        "NEO4J_URI": settings.neo4j.neo4j_uri,
        "REDIS_URL": settings.redis.redis_url,
        "REDIS_CLUSTER": "0",
        "REDIS_PREFIX": settings.redis.redis_prefix,
        "STATE_DIR": str(local.state_dir),
        "API_KEY_SECRET": settings.access.api_key_secret,
    }
    return settings, LocalNeo4j(settings, local), env


async def create_key(settings: Settings) -> str:
    """An all-scope key stored in the Neo4j of ``settings``: a module's own servers (the
    session's key lives in the shared one)."""
    async with open_services(settings) as services:
        return (await services.access.create(ALL_SCOPES, name="test_fault_processes")).token


@asynccontextmanager
async def app_in_process(settings: Settings, key: str) -> AsyncIterator[tuple[Any, AppClient]]:
    """Services opened over ``settings`` and an HTTP client of their app in this process,
    sending ``key``; errors are answered as a served app answers them."""
    from graphsvc.api.app import create_app
    from graphsvc.bootstrap import open_services

    async with open_services(settings) as service:
        http = AppClient(create_app(settings, service), key, raise_app_exceptions=False)
        async with http:
            yield service, http


def server_env(settings: Settings, **env: str) -> dict[str, str]:
    """The environment of `graphsvc` subprocesses over the given servers."""
    return {
        **os.environ,
        "NEO4J_URI": settings.neo4j.neo4j_uri,
        "REDIS_URL": settings.redis.redis_url,
        "REDIS_CLUSTER": str(int(settings.redis.redis_cluster)),
        "API_KEY_SECRET": settings.access.api_key_secret,
        **env,
    }


def cli(env: dict[str, str], *argv: str, timeout: float = 120) -> str:
    """`graphsvc ARGV` as a process under ``env``, which must succeed: its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def start_worker(env: dict[str, str], log: Path | None = None) -> processes.Process:
    """`graphsvc worker` in its own process (and session), once it says it runs."""
    log = log or _log("worker")
    start = log.stat().st_size if log.exists() else 0  # the log of an earlier run goes on

    def running() -> bool:
        with log.open("rb") as lines:
            lines.seek(start)
            return b"graphsvc worker: running" in lines.read()

    cmd = [sys.executable, "-u", "-m", "graphsvc.ops.cli", "worker"]
    process = processes.spawn(cmd, log, env=env)
    processes.wait_until(running, 120, "the worker", process, logs=[log])
    return process


def _log(name: str) -> Path:
    """A log of its own for a process this test run starts (read back when it fails)."""
    return Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log", dir=_LOGS)[1])


def stop_process(process: processes.Process | None) -> None:
    processes.stop(process)


def start_api(settings: Settings, **env: str) -> tuple[processes.Process, str]:
    """`graphsvc serve` in its own process on a free port, over the given servers: the process
    and its base URL, once /livez answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = _log("api")
    cmd = [sys.executable, "-m", "graphsvc.ops.cli", "serve"]
    process = processes.spawn(cmd, log, env=server_env(settings, API_PORT=str(port), **env))
    answers = functools.partial(processes.http_ok, f"{url}/livez")
    try:
        processes.wait_until(answers, 60, "the API", process, logs=[log])
    except processes.ProcessFailed:
        processes.stop(process)
        raise
    return process, url


@contextmanager
def served_api(settings: Settings, **env: str) -> Iterator[str]:
    """`graphsvc serve` in its own process (``start_api``) and a `graphsvc worker` beside it,
    as deployed; stopped after."""
    worker = start_worker(server_env(settings, **env))
    try:
        process, url = start_api(settings, **env)
        try:
            yield url
        finally:
            processes.stop(process)
    finally:
        stop_process(worker)


# Every command of `graphsvc`, in the order `graphsvc --help` lists them, and the commands of
# its groups: none may disappear (the CLI's tests and its generated reference check both).
CLI_COMMANDS = [
    "serve",
    "worker",
    "services",
    "load",
    "gen",
    "demo",
    "export",
    "check",
    "rebuild",
    "reconcile",
    "relay",
    "jobs",
    "keys",
    "ranker",
]
CLI_GROUPS = {
    "services": ["up", "down", "status"],
    "keys": ["create", "list", "revoke", "local"],
    "ranker": ["status", "promote", "split", "report", "train", "eval", "served"],
}
CLI_PATHS = CLI_COMMANDS + [f"{group} {sub}" for group, subs in CLI_GROUPS.items() for sub in subs]
