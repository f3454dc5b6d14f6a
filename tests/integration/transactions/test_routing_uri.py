"""The cluster path: a ``neo4j://`` URI makes the driver route, asking the server for a routing
table and sending read-access sessions to readers and write-access ones to the leader. Against
the local single server every role is that server, so the answers must equal those through
``bolt://``; a deployment on a cluster is then not the first time the routing path runs.

Reads are asked twice through the routing app: over the shared mirror, and over a mirror of its
own (another key prefix, so every list and count is built from Neo4j through read sessions).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, build
from graphsvc.settings import Settings
from graphsvc.wire.schemas import FollowBody, UnfollowBody
from tests.support.driver import Driver
from tests.support.helpers import app_client

UserIds = Callable[[str], str]


def routing(settings: Settings) -> str:
    scheme, _, rest = settings.neo4j.neo4j_uri.partition("://")
    if scheme not in ("bolt", "neo4j"):
        pytest.skip(f"the servers are reached through {scheme}://, not bolt://")
    return f"neo4j://{rest}"


@asynccontextmanager
async def routed_client(
    settings: Settings, key: str, **overrides: object
) -> AsyncIterator[httpx.AsyncClient]:
    routed = settings.with_values(
        **{"neo4j_uri": routing(settings), "rate_limits_enabled": False, **overrides}
    )
    async with Connections.open(routed.neo4j, routed.redis) as connections:
        service = build(routed, connections)
        app = create_app(routed, service)
        async with app_client(app, key) as http:
            yield http
        await service.close()


CORE_READS = (
    "/v1/users/{a}/followers?limit=2",
    "/v1/users/{a}/following",
    "/v1/users/{a}/friends",
    "/v1/users/{a}/counts",
    "/v1/users/{b}/counts",
    "/v1/users/{b}/followers",
    "/v1/users/{a}/common-following/{b}",
    "/v1/users/{a}/common-followers/{b}",
    "/v1/users/{a}/familiar-followers/{c}",
    "/v1/users/{a}/relationships?ids={b},{c},{d}",
    "/v1/users/{a}/status",
)


async def answers(http: httpx.AsyncClient, users: dict[str, str]) -> list[tuple[int, object]]:
    found = []
    for template in CORE_READS:
        response = await http.get(template.format(**users))
        found.append((response.status_code, response.json()))
    return found


async def test_core_routes_through_a_routing_uri_answer_as_through_bolt(
    client: httpx.AsyncClient,
    driver: Driver,
    server_settings: Settings,
    service_key: str,
    uid: UserIds,
) -> None:
    users = {name: uid(name) for name in "abcd"}
    a, b, c, d = (users[n] for n in "abcd")
    await driver.follow_pairs((a, b), (b, a), (a, c), (b, c), (c, b), (d, a), (d, b))
    async with routed_client(server_settings, service_key) as routed:
        # writes through the routing driver (leader sessions)
        graph = Driver(routed)
        assert await graph.follow(c, a) == FollowBody(following=True, created=True)
        assert graph.last_status == 200
        await graph.block(a, d)
        assert await graph.unfollow(b, c) == UnfollowBody(following=False, removed=True)
        expected = await answers(client, users)
        assert all(status == 200 for status, _ in expected), expected
        assert await answers(routed, users) == expected
    prefix = f"rt{uuid.uuid4().hex[:8]}:"
    async with routed_client(server_settings, service_key, redis_prefix=prefix) as cold:
        assert await answers(cold, users) == expected
