"""Fixtures: real Neo4j and Redis, never stand-ins.

Which servers: the ones named by NEO4J_URI / REDIS_URL when set; otherwise containers
(testcontainers) when a Docker engine answers; otherwise the project's own local servers,
started as `graphsvc services up` does (and left running for the next run). Under pytest-xdist
(`make test` runs ``-n 2``) each worker after the first has local servers of its own
(``tests/support/workers.py``), started here.

Every test makes its own user ids (unique per run), so tests share the servers with demo data
and with each other without interfering. Each module ends by checking that the mirror of every
user it touched equals Neo4j, and each worker's session ends with the same check over all of
them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path

import httpx
import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, Services, build
from graphsvc.domain.access import ALL_SCOPES, Scope
from graphsvc.ops.servers import local_servers
from graphsvc.settings import LocalServerSettings, Settings
from tests.support import tiers, workers
from tests.support.driver import AsViewer, Driver
from tests.support.helpers import ThrowawayRedis, app_client
from tests.support.run import RUN, TOUCHED, assert_consistent, new_user_id

# The suite serves with the development secrets; outside development mode the app refuses them.
os.environ.setdefault("DEVELOPMENT", "1")
# Every in-process client calls from one address: the suite's many refused keys must not throttle
# each other (the throttle's own tests set a small AUTH_FAILURES_MAX and an address of their own).
os.environ.setdefault("AUTH_FAILURES_MAX", "1000000")
# One graph serves the whole suite: a worker that a test starts must not train the ranker on it
# under the default model name, whose built-in ranking other tests read. The training's own
# tests ask for it, under model names of their own.
os.environ.setdefault("RANKER_TRAIN_MIN_EDGES", str(10**12))
# A model a training promotes is served at once, but in the tests of the trial, and of the
# service as served (which go through one).
os.environ.setdefault("RANKER_TRIAL_SHARE", "0")
# Worker 1 and up of a parallel run: servers of their own (before any setting is read).
OWN_SERVERS = workers.use_own_servers()


def _docker_engine() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


def _containers(stack: ExitStack) -> dict[str, str]:
    from testcontainers.neo4j import Neo4jContainer
    from testcontainers.redis import RedisContainer

    password = Settings().neo4j.neo4j_password
    neo4j = stack.enter_context(Neo4jContainer("neo4j:5.26-community", password=password))
    redis = stack.enter_context(RedisContainer("redis:7"))
    host, port = redis.get_container_host_ip(), redis.get_exposed_port(6379)
    return {"neo4j_uri": neo4j.get_connection_url(), "redis_url": f"redis://{host}:{port}/0"}


@pytest.fixture(scope="session")
def server_settings() -> Iterator[Settings]:
    with ExitStack() as stack:
        if OWN_SERVERS or os.environ.get("NEO4J_URI") or os.environ.get("REDIS_URL"):
            settings = Settings()
        elif _docker_engine():
            settings = Settings(**_containers(stack))
        else:
            settings = Settings()
            local_servers.up(settings, LocalServerSettings())
        yield settings


@pytest.fixture(scope="session")
async def connections(server_settings: Settings) -> AsyncIterator[Connections]:
    async with Connections.open(server_settings.neo4j, server_settings.redis) as opened:
        yield opened


@pytest.fixture(scope="session")
async def backends(server_settings: Settings, connections: Connections) -> Services:
    """Services over the shared connections with the servers' settings: the schema applied,
    and the write statements and candidate reads planned as a serving process plans them, so
    the first write to, or suggestion from, a freshly started Neo4j is not a test's, under a
    request's transaction timeout."""
    services = build(server_settings, connections)
    await services.core.neo4j.store.apply_schema()
    await services.core.neo4j.edges.prepare()
    await services.suggestions.candidates.prepare()
    await services.background.list_events.prepare()  # its group takes what the tests write
    return services


@pytest.fixture(scope="session")
def make_service(
    backends: Services, connections: Connections, server_settings: Settings
) -> Callable[..., Services]:
    """Services over the shared connections, with settings overridden (e.g. a small cap)."""

    def make(**overrides: object) -> Services:
        return build(server_settings.with_values(**overrides), connections)

    return make


@pytest.fixture
def service(make_service: Callable[..., Services]) -> Services:
    return make_service()


@pytest.fixture(scope="session")
async def service_key(backends: Services) -> str:
    """A service key with every scope, stored in Neo4j like any other (a session's one)."""
    return (await backends.access.create(ALL_SCOPES, name=f"tests {RUN}")).token


@pytest.fixture
def make_client(
    make_service: Callable[..., Services], service_key: str
) -> Callable[..., httpx.AsyncClient]:
    """An HTTP client for the real ASGI app over a service with the given overrides, sending
    the session's all-scope key (``key=None``: none). Per-key budgets are off unless a test
    turns them on (``rate_limits_enabled=True``): the suite sends more than any budget."""

    def make(*, key: str | None = service_key, **overrides: object) -> httpx.AsyncClient:
        service = make_service(**{"rate_limits_enabled": False, **overrides})
        return app_client(create_app(service.settings, service), key)

    return make


@pytest.fixture
async def client(make_client: Callable[..., httpx.AsyncClient]) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client() as http:
        yield http


@pytest.fixture
def make_driver(make_client: Callable[..., httpx.AsyncClient]) -> Callable[..., Driver]:
    """graphsvc's own client over the app, built as ``make_client`` builds its HTTP client
    (``async with make_driver(max_following=3) as graph:``)."""

    def make(**options: object) -> Driver:
        return Driver(make_client(**options))

    return make


@pytest.fixture
def driver(client: httpx.AsyncClient) -> Driver:
    return Driver(client)


@pytest.fixture(scope="module")
async def product_key(backends: Services) -> str:
    """A product's service key: read and write, no admin, bound to no user."""
    scopes = frozenset({Scope.READ, Scope.WRITE})
    return (await backends.access.create(scopes, name=f"product tests {RUN}")).token


@pytest.fixture
def as_viewer(make_driver: Callable[..., Driver], product_key: str) -> AsViewer:
    """A driver reading with the product's service key for ``viewer`` (None: anonymous):
    ``async with as_viewer("ada") as graph:``; settings overridden as ``make_driver`` takes
    them (``as_viewer("ada", hot_list_cap=3)``)."""

    @asynccontextmanager
    async def open_as(viewer: str | None, **overrides: object) -> AsyncIterator[Driver]:
        async with make_driver(key=product_key, **overrides) as graph:
            if viewer is not None:
                graph.http.headers["X-Graph-Viewer"] = viewer
            yield graph

    return open_as


@pytest.fixture
def throwaway_redis(tmp_path: Path) -> Iterator[ThrowawayRedis]:
    """A redis-server of the test's own, to kill and restart empty."""
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    server = ThrowawayRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
async def every_touched(backends: Services) -> AsyncIterator[None]:
    """When a worker's share of the suite ends, the mirror of every user its
    tests touched must still equal Neo4j, whatever ran after their modules."""
    yield
    if TOUCHED:
        await assert_consistent(backends, set(TOUCHED))


@pytest.fixture(scope="module")
async def touched(backends: Services, every_touched: None) -> AsyncIterator[set[str]]:
    """Users a module touched; when the module ends their mirrors must equal Neo4j (and when
    the worker's run ends, ``every_touched``)."""
    users: set[str] = set()
    yield users
    if users:
        await assert_consistent(backends, users)


@pytest.fixture
def uid(touched: set[str]) -> Callable[[str], str]:
    def make(name: str = "u") -> str:
        user_id = new_user_id(name)
        touched.add(user_id)
        return user_id

    return make


@pytest.fixture
def remember(touched: set[str]) -> Callable[[list[str]], None]:
    """Also check users whose ids a test did not make (loaded files)."""

    def add(user_ids: list[str]) -> None:
        TOUCHED.update(user_ids)
        touched.update(user_ids)

    return add


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that take minutes (marked ``long``, or ``faults``) are handed out first, so a
    parallel run does not end with one worker busy with one of them and the other idle."""

    def long(item: pytest.Item) -> bool:
        return any(item.iter_markers("long")) or any(item.iter_markers("faults"))

    items.sort(key=lambda item: not long(item))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "faults: real-process fault tests (in `make test`)")
    config.addinivalue_line(
        "markers", "long: a module that takes minutes (servers of its own, a training)"
    )
    config.addinivalue_line(
        "markers", "slow: long versions of the fault and race tests (`make test-slow` only)"
    )


def pytest_sessionstart() -> None:
    """The run's clock starts; a worker with servers of its own starts them before its first
    test, as `make test` starts the first worker's (a test may start `graphsvc` processes
    over them without asking for any fixture)."""
    tiers.start()
    if OWN_SERVERS:
        local_servers.up(Settings(), LocalServerSettings())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How long each tier (unit, integration, api) took, the slowest last."""
    tiers.report(terminalreporter)
