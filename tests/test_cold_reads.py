"""Cold reads under load: one rebuild per cold user, a bounded number at once (real servers;
the graph adapter's snapshot method is only counted and, in one test, slowed down)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from helpers import service_of

from graphsvc.bootstrap import Services

UserIds = Callable[[str], str]


def count_snapshots(
    monkeypatch: pytest.MonkeyPatch, service: Services, delay: float = 0.0
) -> list[tuple[str, ...]]:
    """Record every snapshot query the service sends to Neo4j (and optionally slow it)."""
    calls: list[tuple[str, ...]] = []
    real = service.neo4j.snapshots.snapshots

    async def counted(user_ids: Any, **kwargs: Any) -> Any:
        calls.append(tuple(user_ids))
        await asyncio.sleep(delay)
        return await real(user_ids, **kwargs)

    monkeypatch.setattr(service.neo4j.snapshots, "snapshots", counted)
    return calls


async def cold_star(client: httpx.AsyncClient, backends: Services, uid: UserIds) -> str:
    star = uid("star")
    for n in range(30):
        response = await client.put(f"/v1/users/{uid(f'fan{n}')}/following/{star}")
        assert response.status_code == 200
    await backends.redis.mirror.drop([star])
    return star


async def test_concurrent_reads_of_a_cold_user_share_one_rebuild(
    client: httpx.AsyncClient, backends: Services, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    star = await cold_star(client, backends, uid)
    calls = count_snapshots(monkeypatch, service_of(client), delay=0.05)
    pages = await asyncio.gather(
        *(client.get(f"/v1/users/{star}/followers", params={"limit": 5}) for _ in range(50))
    )
    assert {r.status_code for r in pages} == {200}
    assert len({r.text for r in pages}) == 1
    assert calls == [(star,)]
    counts = await asyncio.gather(*(client.get(f"/v1/users/{star}/counts") for _ in range(20)))
    assert {r.json()["followers"] for r in counts} == {30}
    assert calls == [(star,)]  # the rebuild installed the counts too


async def test_cold_counts_share_one_snapshot(
    client: httpx.AsyncClient, backends: Services, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    star = await cold_star(client, backends, uid)
    calls = count_snapshots(monkeypatch, service_of(client), delay=0.05)
    counts = await asyncio.gather(*(client.get(f"/v1/users/{star}/counts") for _ in range(40)))
    assert {r.json()["followers"] for r in counts} == {30}
    assert calls == [(star,)]


async def test_rebuilds_are_bounded_and_the_rest_are_told_to_retry(
    make_client: Callable[..., httpx.AsyncClient],
    backends: Services,
    uid: UserIds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with make_client(rebuild_concurrency=2, rebuild_wait_seconds=0.05) as client:
        users = [await cold_star(client, backends, uid) for _ in range(3)]
        users += [uid(f"u{n}") for n in range(7)]
        for user in users[3:]:
            await client.put(f"/v1/users/{user}/following/{users[0]}")
        await backends.redis.mirror.drop(users)
        calls = count_snapshots(monkeypatch, service_of(client), delay=0.5)
        pages = await asyncio.gather(*(client.get(f"/v1/users/{u}/followers") for u in users))
        statuses = [r.status_code for r in pages]
        assert statuses.count(200) == 2 and statuses.count(503) == 8
        refused = next(r for r in pages if r.status_code == 503)
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["error"]["code"] == "overloaded"
        assert len(calls) == 2
        monkeypatch.undo()
        for user in users:  # retried one by one, as Retry-After asks
            assert (await client.get(f"/v1/users/{user}/followers")).status_code == 200
