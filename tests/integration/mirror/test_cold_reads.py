"""Cold reads under load: one rebuild per cold user, a bounded number at once (real servers;
the graph adapter's snapshot method is only counted and, in one test, slowed down)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from graphsvc.bootstrap import Services
from graphsvc.client import GraphError
from tests.support.driver import Driver

UserIds = Callable[[str], str]


def count_snapshots(
    monkeypatch: pytest.MonkeyPatch, service: Services, delay: float = 0.0
) -> list[tuple[str, ...]]:
    """Record every snapshot query the service sends to Neo4j (and optionally slow it)."""
    calls: list[tuple[str, ...]] = []
    real = service.core.neo4j.snapshots.snapshots

    async def counted(user_ids: Any, **kwargs: Any) -> Any:
        calls.append(tuple(user_ids))
        await asyncio.sleep(delay)
        return await real(user_ids, **kwargs)

    monkeypatch.setattr(service.core.neo4j.snapshots, "snapshots", counted)
    return calls


async def cold_star(driver: Driver, backends: Services, uid: UserIds) -> str:
    star = uid("star")
    for n in range(30):
        await driver.follows(uid(f"fan{n}"), star)
    await backends.core.redis.mirror_builds.drop([star])
    return star


async def test_concurrent_reads_of_a_cold_user_share_one_rebuild(
    driver: Driver, backends: Services, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    star = await cold_star(driver, backends, uid)
    calls = count_snapshots(monkeypatch, driver.services, delay=0.05)
    pages = await asyncio.gather(
        *(anext(driver.followers(star, page_size=5).pages()) for _ in range(50))
    )
    assert all(page == pages[0] for page in pages)
    assert calls == [(star,)]
    counts = await asyncio.gather(*(driver.counts(star) for _ in range(20)))
    assert {c.followers for c in counts} == {30}
    assert calls == [(star,)]  # the rebuild installed the counts too


async def test_cold_counts_share_one_snapshot(
    driver: Driver, backends: Services, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    star = await cold_star(driver, backends, uid)
    calls = count_snapshots(monkeypatch, driver.services, delay=0.05)
    counts = await asyncio.gather(*(driver.counts(star) for _ in range(40)))
    assert {c.followers for c in counts} == {30}
    assert calls == [(star,)]


async def test_rebuilds_are_bounded_and_the_rest_are_told_to_retry(
    make_driver: Callable[..., Driver],
    backends: Services,
    uid: UserIds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with make_driver(rebuild_concurrency=2, rebuild_wait_seconds=0.05) as driver:
        users = [await cold_star(driver, backends, uid) for _ in range(3)]
        users += [uid(f"u{n}") for n in range(7)]
        for user in users[3:]:
            await driver.follows(user, users[0])
        await backends.core.redis.mirror_builds.drop(users)
        calls = count_snapshots(monkeypatch, driver.services, delay=0.5)
        answers = await asyncio.gather(
            *(anext(driver.followers(u).pages()) for u in users), return_exceptions=True
        )
        refused = [a for a in answers if isinstance(a, BaseException)]
        assert len(answers) - len(refused) == 2 and len(refused) == 8
        for error in refused:
            assert isinstance(error, GraphError), error
            assert (error.status, error.code, error.retry_after) == (503, "overloaded", 1.0)
        assert len(calls) == 2
        monkeypatch.undo()
        for user in users:  # retried one by one, as Retry-After asks
            await anext(driver.followers(user).pages())
