"""Graph loads and the work that waits for them, on the real servers: a load holds the mark
while it writes and lets go at its end; the cold start's charts are not refreshed while a load
runs, and are once it ended. (The ranker's training put off by a load is in
``test_ranker_training.py``.)

The mark lives under a Redis prefix of this run: a load here must not hold off the workers of
other tests, which share the suite's prefix."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load
from graphsvc.settings import Settings
from graphsvc.workers.graph_loads import load_running, loading
from tests.support.helpers import sync_redis
from tests.support.run import RUN

UserIds = Callable[[str], str]
MakeService = Callable[..., Services]
PREFIX = f"gl{RUN}:"


@pytest.fixture(scope="module")
def services(make_service: MakeService, server_settings: Settings) -> Iterator[Services]:
    """Services whose Redis keys are this run's, under PREFIX; removed once the module ends."""
    yield make_service(redis_prefix=PREFIX)
    with sync_redis(server_settings) as client:
        for key in client.scan_iter(match=f"{PREFIX}*", count=10_000):
            client.unlink(key)


async def test_a_load_holds_the_mark_while_it_writes_and_lets_go_at_its_end(
    services: Services,
    uid: UserIds,
    remember: Callable[[list[str]], None],
    tmp_path: Path,
) -> None:
    leases = services.core.redis.leases
    prefix = uid("load") + "."
    path = tmp_path / "edges.txt"
    path.write_text("".join(f"f{n} star{n % 7}\n" for n in range(300)))
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    assert not await load_running(leases)
    seen: list[bool] = []
    loader = asyncio.get_running_loop().create_task(
        load(services, edges, online=True, progress=False)
    )
    while not loader.done():  # what the workers see while it runs
        seen.append(await load_running(leases))
    report = await loader
    assert report.created == 300
    assert True in seen
    assert not await load_running(leases)  # let go at its end, not left to run out


async def test_the_cold_start_lists_wait_for_a_load_and_are_refreshed_once_it_ended(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    keeper, lists = services.background.cold_start_charts, services.core.redis.cold_start
    caplog.set_level(logging.INFO, logger="graphsvc.workers.cold_start_charts")
    async with loading(services.core.redis.leases):
        for _ in range(3):  # the worker's rounds meanwhile
            assert await keeper.refresh_round() is False
        assert not await lists.popular_built()  # no scan of a graph half loaded
    put_off = [r for r in caplog.records if "put off while a graph load runs" in r.getMessage()]
    assert len(put_off) == 1  # said once, not every round
    await keeper.refresh_round()
    assert await lists.popular_built()
