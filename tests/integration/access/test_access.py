"""The front door on the real servers: API keys and scopes on every route, the
acting user of a user-bound key, revocation through the cache, per-key budgets shared by two
API processes through Redis, the probes, /metrics, and keys never kept or logged in clear."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from graphsvc.adapters.neo4j.store import open_driver
from graphsvc.adapters.redis.client import open_redis
from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, Services, build
from graphsvc.domain.access import VIEWER_HEADER, BoundKeyScope, Scope, Unauthenticated
from graphsvc.domain.errors import Overloaded
from graphsvc.services.access import FRESH_LOOKUPS
from graphsvc.settings import Settings
from tests.support.driver import Driver, refused
from tests.support.helpers import free_port
from tests.support.run import new_user_id

MakeClient = Callable[..., httpx.AsyncClient]
MakeDriver = Callable[..., Driver]
MakeService = Callable[..., Services]
PARAM = re.compile(r"\{(\w+)\}")
BODIES: dict[tuple[str, str], Any] = {
    ("PUT", "/v1/users/{user_id}/status"): {"status": "active"},
    ("PUT", "/v1/users/{user_id}/privacy"): {"locked": False},
    ("POST", "/v1/interactions"): [
        {"actor": "ACTOR", "target": "T", "kind": "message", "at": "2026-11-01T00:00:00Z"}
    ],
    ("POST", "/v1/users/{user_id}/suggestions/impressions"): {"ids": ["T"]},
    ("POST", "/v1/users/{user_id}/followers/remove"): {"ids": ["T"]},
    ("POST", "/v1/keys"): {"scopes": ["read"], "name": "made by test_access"},
}
# Lists only their owner reads: a service key reads them naming the owner as its viewer.


def guarded_operations(app_schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(method, path template, scope) of every operation that needs a key."""
    return [
        (method.upper(), path, op["x-required-scope"])
        for path, ops in app_schema["paths"].items()
        for method, op in ops.items()
        if "x-required-scope" in op
    ]


def request_for(method: str, template: str, me: str) -> tuple[str, Any]:
    """A valid request of an operation, acting as ``me`` (SSE streams are not opened: the
    key is checked before the stream starts, so a refused one never streams)."""
    values = {"user_id": me, "key_id": "0123456789abcdef"}
    path = PARAM.sub(lambda m: values.get(m.group(1), new_user_id("other")), template)
    body = BODIES.get((method, template))
    if body is not None:
        body = json.loads(json.dumps(body).replace("ACTOR", me))
    if template.endswith("/relationships"):
        path += "?ids=x"
    return path, body


async def send(
    http: httpx.AsyncClient, method: str, path: str, body: Any, viewer: str | None = None
) -> httpx.Response:
    """The request; ``viewer``: the user a service key reads as (lists only their owner reads
    answer a service key that names no one with a 403)."""
    headers = {VIEWER_HEADER: viewer} if viewer else None
    return (
        await http.request(method, path, json=body, headers=headers)
        if body is not None
        else await http.request(method, path, headers=headers)
    )


@pytest.fixture
async def keys(backends: Services) -> dict[str, str]:
    """One key per single scope, and a read and write key bound to a user."""
    made = {s.value: (await backends.access.create(frozenset({s}), name="t")).token for s in Scope}
    bound_user = new_user_id("bound")
    read_write = frozenset({Scope.READ, Scope.WRITE})
    made["bound"] = (await backends.access.create(read_write, user=bound_user, name="t")).token
    made["bound_user"] = bound_user
    return made


async def test_every_route_needs_a_key_and_its_scope(
    make_client: MakeClient, keys: dict[str, str]
) -> None:
    async with make_client(key=None) as anonymous:
        schema = (await anonymous.get("/openapi.json")).json()
        operations = guarded_operations(schema)
        assert len(operations) >= 24
        for method, template, _ in operations:
            path, body = request_for(method, template, new_user_id("me"))
            response = await send(anonymous, method, path, body)
            assert response.status_code == 401, (method, template, response.text)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"]["code"] == "unauthenticated"
    async with make_client(key="gsk_0123456789abcdef_" + "x" * 43) as forged:
        response = await forged.get(f"/v1/users/{new_user_id()}/counts")
        assert response.status_code == 401
    for method, template, scope in operations:
        other = next(s.value for s in Scope if s.value != scope)
        async with make_client(key=keys[other]) as lacking:
            path, body = request_for(method, template, new_user_id("me"))
            response = await send(lacking, method, path, body)
            assert response.status_code == 403, (method, template, response.text)
            assert response.json()["error"]["code"] == "missing_scope"
        async with make_client(key=keys[scope]) as right:
            me = new_user_id("me")
            path, body = request_for(method, template, me)
            if template.endswith(("/events", "/notifications")):
                continue  # a stream: tested in test_events and test_bells with a key
            response = await send(right, method, path, body, viewer=me)
            assert response.status_code not in (401, 403), (method, template, response.text)
            assert response.status_code < 500, (method, template, response.text)


async def test_a_user_bound_key_acts_only_as_its_user(
    make_driver: MakeDriver, keys: dict[str, str]
) -> None:
    me, someone = keys["bound_user"], new_user_id("someone")
    target = new_user_id("target")
    async with make_driver(key=keys["bound"]) as graph:
        assert (await graph.follow(me, target)).created
        wrong = (403, "wrong_acting_user")
        await refused(graph.follow(someone, target), *wrong)
        await refused(graph.unfollow(someone, target), *wrong)
        await refused(graph.block(someone, target), *wrong)
        await refused(graph.dismiss(someone, target), *wrong)
        await refused(graph.record_impressions(someone, [target]), *wrong)
        # interactions are reported by a service, for anyone: never by a bound key, even its own
        at = datetime(2026, 11, 1, tzinfo=UTC)
        for actor in (someone, me):
            event = (actor, target, "like", at)
            await refused(graph.record_interactions([event]), 403, "service_key_required")
        # reads are not acts: a bound key reads anyone's lists
        assert await graph.ids(someone, "followers") == []
        assert await graph.ids(target, "followers") == [me]
        # nothing was changed on someone's behalf
        assert (await graph.counts(someone)).following == 0


async def test_a_user_bound_key_reads_only_its_own_view(
    make_client: MakeClient, make_driver: MakeDriver, keys: dict[str, str], backends: Services
) -> None:
    """Another user's timeline, suggestions, event stream, friends by closeness and
    relationships (blocks between third parties) are 403 for a bound key; the refused read
    leaves no trace (no activity mark, no home timeline rebuild)."""
    me, someone, third = keys["bound_user"], new_user_id("someone"), new_user_id("third")
    async with make_driver() as service:
        await service.block(someone, third)
    async with make_client(key=keys["bound"]) as http:
        for path in (
            f"/v1/users/{someone}/timeline",
            f"/v1/users/{someone}/suggestions",
            f"/v1/users/{someone}/events",
            f"/v1/users/{someone}/notifications",
            f"/v1/users/{someone}/exports/blocks",
            f"/v1/users/{someone}/move",
            f"/v1/users/{someone}/friends",
            f"/v1/users/{someone}/relationships?ids={third}",
        ):
            response = await http.get(path)
            assert response.status_code == 403, (path, response.text)
            assert response.json()["error"]["code"] == "wrong_acting_user"
        for path in (
            f"/v1/users/{me}/timeline",
            f"/v1/users/{me}/suggestions",
            f"/v1/users/{me}/friends",
            f"/v1/users/{me}/relationships?ids={third}",
        ):
            assert (await http.get(path)).status_code == 200, path
        # lists and counts are the public profile: readable by anyone with a read key
        assert (await http.get(f"/v1/users/{someone}/following")).status_code == 200
    home_timelines = backends.core.redis.home_timelines
    assert not await backends.core.redis.client.exists(
        home_timelines.key("rd", someone), home_timelines.key("in", someone)
    )


def client_at(app: object, address: str, key: str) -> httpx.AsyncClient:
    """An in-process client calling from ``address``."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=(address, 40000)),  # type: ignore[arg-type]
        base_url="http://graphsvc",
        headers={"Authorization": f"Bearer {key}"},
    )


def made_up_key() -> str:
    return f"gsk_{uuid.uuid4().hex[:16]}_{'x' * 43}"


async def test_failed_authentication_is_throttled_per_address_before_any_lookup(
    make_service: MakeService, backends: Services
) -> None:
    """Past AUTH_FAILURES_MAX failures an address gets 429s for keys not cached here, before
    the store is asked; a key cached here, and other addresses, go on."""
    real = (await backends.access.create(frozenset({Scope.READ}), name="throttle")).token
    service = make_service(auth_failures_max=3, auth_failure_window_seconds=60)
    app = create_app(service.settings, service)
    flooder, other = f"10.{uuid.uuid4().int % 250}.7.1", f"10.{uuid.uuid4().int % 250}.8.2"
    url = f"/v1/users/{new_user_id()}/counts"
    async with client_at(app, flooder, real) as cached:
        assert (await cached.get(url)).status_code == 200  # cached before the flood
    statuses = []
    for _ in range(5):
        async with client_at(app, flooder, made_up_key()) as fake:
            answer = await fake.get(url)
            statuses.append(answer.status_code)
    assert statuses == [401, 401, 401, 429, 429], statuses
    assert answer.json()["error"]["code"] == "auth_throttled"
    assert 1 <= int(answer.headers["retry-after"]) <= 60
    another = (await backends.access.create(frozenset({Scope.READ}), name="not cached")).token
    async with client_at(app, flooder, another) as uncached:
        assert (await uncached.get(url)).status_code == 429  # not looked up from there
    async with client_at(app, flooder, real) as cached:
        assert (await cached.get(url)).status_code == 200
    async with client_at(app, other, another) as elsewhere:
        assert (await elsewhere.get(url)).status_code == 200


async def test_new_keys_and_refreshes_of_known_keys_have_gates_of_their_own(
    make_service: MakeService, backends: Services
) -> None:
    """With every slot for keys never seen held (a flood of made-up keys), a known key whose
    cache time ran out is still read again at once."""
    token = (await backends.access.create(frozenset({Scope.READ}), name="gates")).token
    ring = make_service(api_key_cache_seconds=0.2).access
    await ring.authenticate(token)
    release = asyncio.Event()
    held = [
        asyncio.create_task(ring.fresh_lookups.run(f"held{n}", release.wait))
        for n in range(FRESH_LOOKUPS)
    ]
    await asyncio.sleep(0.3)  # the known key's cache time has run out
    try:
        assert (await asyncio.wait_for(ring.authenticate(token), 1.5)).scopes == {Scope.READ}
        with pytest.raises(Overloaded):
            await ring.authenticate(made_up_key())
    finally:
        release.set()
        await asyncio.gather(*held)


async def test_a_key_in_use_is_read_again_before_its_cache_time_ends(
    make_service: MakeService, backends: Services
) -> None:
    """Past half its cache time, a use of a key reads it again in the background: a
    revocation by another process is seen before the cache time ends."""
    new = await backends.access.create(frozenset({Scope.READ}), name="refresh ahead")
    ring = make_service(api_key_cache_seconds=3.0).access
    await ring.authenticate(new.token)
    await backends.access.revoke(new.key.id)  # another process
    await asyncio.sleep(1.6)
    await ring.authenticate(new.token)  # still trusted from the cache; read again behind it
    await asyncio.sleep(0.3)
    with pytest.raises(Unauthenticated):
        await ring.authenticate(new.token)  # 1.9 s after it was cached, well before 3 s


async def test_revocation_takes_effect_within_the_cache_time(
    make_client: MakeClient, backends: Services
) -> None:
    new = await backends.access.create(frozenset({Scope.READ}), name="to revoke")
    async with make_client(key=new.token, api_key_cache_seconds=0.5) as http:
        url = f"/v1/users/{new_user_id()}/counts"
        assert (await http.get(url)).status_code == 200
        assert await backends.access.revoke(new.key.id) is True  # another process revokes
        assert await backends.access.revoke(new.key.id) is False
        await asyncio.sleep(0.6)
        refused = await http.get(url)
        assert refused.status_code == 401, refused.text
    listed = {k.id: k for k in await backends.access.list()}
    assert listed[new.key.id].revoked


async def test_a_budget_is_shared_by_two_api_processes_and_resets(
    make_service: MakeService, backends: Services
) -> None:
    """Two apps, each with its own services (key cache, limiter), as two API processes
    are: the budget lives in Redis, so it is spent across both."""
    token = (await backends.access.create(frozenset({Scope.READ}), name="budget")).token
    limited = {"rate_limits_enabled": True, "rate_limit_reads": "4 per 2 seconds"}
    apps = [create_app(s.settings, s) for s in (make_service(**limited), make_service(**limited))]
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://graphsvc",
            headers={"Authorization": f"Bearer {token}"},
        )
        for app in apps
    ]
    url = f"/v1/users/{new_user_id()}/counts"
    try:
        await asyncio.sleep(2 - (time.time() % 2) + 0.05)  # windows are aligned to the clock
        answers = [await clients[n % 2].get(url) for n in range(6)]
        statuses = [r.status_code for r in answers]
        assert statuses[:4] == [200] * 4 and statuses[4:] == [429, 429], (statuses, answers[0].text)
        first, refused = answers[0], answers[4]
        assert first.headers["ratelimit-limit"] == "4"
        assert first.headers["ratelimit-remaining"] == "3"
        assert 0 < int(first.headers["ratelimit-reset"]) <= 2
        assert refused.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        assert refused.headers["ratelimit-remaining"] == "0"
        await asyncio.sleep(int(refused.headers["retry-after"]) + 0.1)
        assert (await clients[1].get(url)).status_code == 200  # the window reset
    finally:
        for client in clients:
            await client.aclose()


async def test_metrics_count_a_request_and_need_no_key(make_client: MakeClient) -> None:
    route = "/v1/users/{user_id}/counts"
    line = re.compile(
        r'^graphsvc_http_requests_total\{method="GET",route="'
        + re.escape(route)
        + r'",status="200"\} ([0-9.e+]+)$',
        re.M,
    )

    async def scraped(http: httpx.AsyncClient) -> float:
        response = await http.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        found = line.search(response.text)
        return float(found.group(1)) if found else 0.0

    async with make_client() as http, make_client(key=None) as anonymous:
        before = await scraped(anonymous)
        assert (await http.get(f"/v1/users/{new_user_id()}/counts")).status_code == 200
        assert await scraped(anonymous) == before + 1
        text = (await anonymous.get("/metrics")).text
        for name in (
            "graphsvc_http_request_seconds_bucket",
            "graphsvc_mirror_reads_total",
            "graphsvc_redis_breaker_open",
            "graphsvc_outbox_backlog",
            "graphsvc_jobs_running",
        ):
            assert name in text, name


async def test_every_response_carries_a_request_id(make_client: MakeClient) -> None:
    async with make_client() as http:
        echoed = await http.get("/livez", headers={"X-Request-ID": "abc-123"})
        assert echoed.headers["x-request-id"] == "abc-123"
        made = await http.get(f"/v1/users/{new_user_id()}/counts")
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
        replaced = await http.get("/livez", headers={"X-Request-ID": "spaces are not ok"})
        assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"])


@pytest.fixture
async def unreachable(server_settings: Settings) -> AsyncIterator[Callable[..., Services]]:
    """Services whose Neo4j or Redis has nothing listening (a stopped server)."""
    opened: list[Connections] = []

    def make(*, neo4j: bool = True, redis: bool = True) -> Services:
        neo4j_uri = server_settings.neo4j.neo4j_uri if neo4j else f"bolt://127.0.0.1:{free_port()}"
        redis_url = (
            server_settings.redis.redis_url if redis else f"redis://127.0.0.1:{free_port()}/0"
        )
        settings = server_settings.with_values(
            neo4j_uri=neo4j_uri,
            redis_url=redis_url,
            neo4j_connect_timeout=1.0,
            neo4j_retry_seconds=0.5,
        )
        connections = Connections(open_driver(settings.neo4j), open_redis(settings.redis))
        opened.append(connections)
        return build(settings, connections)

    yield make
    for connections in opened:
        await connections.redis.aclose()
        await connections.driver.close()


async def test_probes(unreachable: Callable[..., Services]) -> None:
    async def probe(services: Services, path: str) -> httpx.Response:
        app = create_app(services.settings, services)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://graphsvc") as http:
            return await http.get(path)

    no_neo4j, no_redis = unreachable(neo4j=False), unreachable(redis=False)
    assert (await probe(no_neo4j, "/livez")).json() == {"status": "ok"}  # calls no store
    down = await probe(no_neo4j, "/readyz")
    assert down.status_code == 503 and down.json()["error"]["code"] == "neo4j_unavailable"
    degraded = await probe(no_redis, "/readyz")
    assert degraded.status_code == 200
    ready = degraded.json()
    ranker = ready.pop("ranker")  # the suggestion ranker's staleness: told, never unready
    assert ready == {"neo4j": "ok", "redis": "unavailable"} and isinstance(ranker, str)
    assert (await probe(no_redis, "/metrics")).status_code == 200


async def test_keys_are_never_kept_or_logged_in_clear(
    make_client: MakeClient, backends: Services, caplog: pytest.LogCaptureFixture
) -> None:
    async with make_client() as admin:
        made = await admin.post("/v1/keys", json={"scopes": ["read"], "name": "clear?"})
        assert made.status_code == 201, made.text
        token, key_id = made.json()["key"], made.json()["id"]
        assert token.startswith(f"gsk_{key_id}_")
        listed = (await admin.get("/v1/keys")).json()["items"]
        assert key_id in {k["id"] for k in listed} and "key" not in listed[0]
    secret = token.removeprefix(f"gsk_{key_id}_")  # the secret's alphabet has "_" in it
    assert len(secret) == 43
    records = await backends.core.neo4j.store.driver.execute_query(
        "MATCH (k:ApiKey {id: $id}) RETURN properties(k) AS p", {"id": key_id}
    )
    stored = json.dumps(records.records[0]["p"])
    assert secret not in stored and token not in stored
    caplog.set_level(logging.DEBUG)  # everything any library logs, the driver's queries too
    request_log = logging.getLogger("graphsvc.requests")  # writes to stderr, not to the root
    request_log.addHandler(caplog.handler)
    async with make_client(key=token, log_json=True) as http:
        assert (await http.get(f"/v1/users/{new_user_id()}/counts")).status_code == 200
    async with make_client(key=token + "x", log_json=True) as http:
        assert (await http.get(f"/v1/users/{new_user_id()}/counts")).status_code == 401
    request_log.removeHandler(caplog.handler)
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == "graphsvc.requests"]
    assert [entry["status"] for entry in logged] == [200, 401]
    assert logged[0]["key_id"] == key_id and logged[0]["route"] == "/v1/users/{user_id}/counts"
    assert secret not in caplog.text


async def test_unsupported_methods_say_what_is_allowed(make_client: MakeClient) -> None:
    async with make_client() as http:
        response = await http.post(f"/v1/users/{new_user_id()}/following/{new_user_id()}")
        assert response.status_code == 405
        assert response.headers["allow"] == "DELETE, PUT"
        assert response.json()["error"]["code"] == "method_not_allowed"


async def test_keys_from_the_command_line(
    make_client: MakeClient, server_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """`graphsvc keys create|list|revoke`: the printed key works until revoked; a bad scope
    or an unknown id is one line and exit code 2."""
    from graphsvc.ops import cli

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    me = new_user_id("cli")
    code, out, _ = await asyncio.to_thread(
        run, "keys", "create", "--scopes", "read,write", "--user", me, "--name", "cli test"
    )
    assert code == 0
    token = re.search(r"key \(shown once, keep it\): (gsk_\S+)", out).group(1)
    key_id = re.search(r"key id: ([0-9a-f]{16})", out).group(1)
    async with make_client(key=token, api_key_cache_seconds=0.1) as http:
        target = new_user_id("t")
        assert (await Driver(http).follow(me, target)).created
        code, out, _ = await asyncio.to_thread(run, "keys", "list")
        line = next(row for row in out.splitlines() if row.startswith(key_id))
        assert "read,write" in line and me in line and "live" in line and token not in out
        assert (await asyncio.to_thread(run, "keys", "revoke", key_id))[0] == 0
        await asyncio.sleep(0.2)
        assert (await http.get(f"/v1/users/{me}/counts")).status_code == 401
    for argv, message in (
        (("keys", "create", "--scopes", "read,root"), "scopes must be a non-empty list"),
        (("keys", "revoke", "0123456789abcdef"), "no API key has id '0123456789abcdef'"),
    ):
        code, _, err = await asyncio.to_thread(run, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


async def test_only_read_and_write_keys_may_be_bound_to_a_user(backends: Services) -> None:
    """An admin or internal key acts for everyone (it could mint an unbound key, erase any
    user, read anyone's affinities), so binding one to a user would be a false promise."""
    user = new_user_id("bound")
    for scope in (Scope.ADMIN, Scope.INTERNAL):
        with pytest.raises(BoundKeyScope, match="read and write only"):
            await backends.access.create(frozenset({Scope.READ, scope}), user=user)
    made = await backends.access.create(frozenset({Scope.READ, Scope.WRITE}), user=user)
    assert made.key.user == user


async def test_budgets_fail_open_when_redis_is_unreachable(
    unreachable: Callable[..., Services], service_key: str
) -> None:
    services = unreachable(redis=False)
    app = create_app(services.settings, services)  # budgets on (the default)
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {service_key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://graphsvc", headers=headers
    ) as http:
        before = (await http.get("/metrics")).text
        answers = [await http.get(f"/v1/users/{new_user_id()}/counts") for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 200]  # from Neo4j, unmetered
        assert answers[0].headers["x-graph-source"] == "neo4j"
        assert "ratelimit-limit" not in answers[0].headers
        after = (await http.get("/metrics")).text

    def fail_open(text: str) -> float:
        found = re.search(r"^graphsvc_rate_limit_fail_open_total ([0-9.e+]+)$", text, re.M)
        return float(found.group(1)) if found else 0.0

    assert fail_open(after) == fail_open(before) + 3


async def test_refused_keys_are_counted(make_client: MakeClient) -> None:
    async with make_client(key=None) as anonymous:
        pattern = re.compile(r'^graphsvc_auth_failures_total\{status="401"\} ([0-9.e+]+)$', re.M)

        def refused(text: str) -> float:
            found = pattern.search(text)
            return float(found.group(1)) if found else 0.0

        before = refused((await anonymous.get("/metrics")).text)
        assert (await anonymous.get(f"/v1/users/{new_user_id()}/counts")).status_code == 401
        assert refused((await anonymous.get("/metrics")).text) == before + 1


async def test_the_key_is_checked_before_a_body_is_read(
    make_client: Callable[..., httpx.AsyncClient], uid: Callable[[str], str]
) -> None:
    user = uid("x")
    async with make_client(key=None) as anonymous:
        for method, path in (
            ("POST", "/v1/interactions"),
            ("PUT", f"/v1/users/{user}/status"),
            ("PUT", f"/v1/users/{user}/posts/p1"),
            ("POST", "/v1/keys"),
        ):
            response = await anonymous.request(
                method, path, content=b"{not json", headers={"content-type": "application/json"}
            )
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"].startswith("Bearer")
