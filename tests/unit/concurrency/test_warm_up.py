"""Start-up work done again after its store was lost: not before, once for every caller
waiting, a 503 for a caller that cannot wait, and again after a failed attempt (no servers
needed)."""

from __future__ import annotations

import asyncio

import pytest

from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.errors import StoreWarming


class Work:
    def __init__(self) -> None:
        self.runs = 0
        self.release = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self) -> None:
        self.runs += 1
        await self.release.wait()
        if self.fail is not None:
            raise self.fail


async def test_nothing_is_done_until_the_store_is_lost() -> None:
    work = Work()
    warm_up = WarmUp("store", work)
    await warm_up.ready(0.01)
    assert work.runs == 0 and not warm_up.due


async def test_callers_waiting_together_share_one_run() -> None:
    work = Work()
    warm_up = WarmUp("store", work)
    warm_up.lost()
    waiting = [asyncio.create_task(warm_up.ready(5)) for _ in range(5)]
    await asyncio.sleep(0.01)
    work.release.set()
    await asyncio.gather(*waiting)
    assert work.runs == 1 and not warm_up.due
    await warm_up.ready(0.01)
    assert work.runs == 1


async def test_a_caller_that_cannot_wait_is_told_to_retry_and_the_work_goes_on() -> None:
    work = Work()
    warm_up = WarmUp("store", work)
    warm_up.lost()
    with pytest.raises(StoreWarming) as refused:
        await warm_up.ready(0.01)
    assert refused.value.status == 503 and refused.value.headers["Retry-After"]
    assert warm_up.due
    work.release.set()
    await warm_up.ready(5)  # the same run, finished
    assert work.runs == 1 and not warm_up.due


async def test_a_failed_run_fails_its_callers_and_the_next_caller_runs_it_again() -> None:
    work = Work()
    work.fail = ConnectionError("still down")
    work.release.set()
    warm_up = WarmUp("store", work)
    warm_up.lost()
    with pytest.raises(ConnectionError):
        await warm_up.ready(5)
    assert warm_up.due
    work.fail = None
    await warm_up.ready(5)
    assert work.runs == 2 and not warm_up.due


async def test_lost_again_during_a_run_is_due_again_after_it() -> None:
    work = Work()
    warm_up = WarmUp("store", work)
    warm_up.lost()
    running = asyncio.create_task(warm_up.ready(5))
    await asyncio.sleep(0.01)
    warm_up.lost()  # lost again while the plans were being made
    work.release.set()
    await running
    assert warm_up.due
