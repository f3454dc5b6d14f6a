"""One rebuild per key at a time: callers that join share it, and a joiner is not cancelled
with the caller that ran it (that one's request deadline), but runs the work itself."""

from __future__ import annotations

import asyncio

import pytest

from graphsvc.concurrency.single_flight import SingleFlight


async def test_callers_of_one_key_share_one_run() -> None:
    runs = 0

    async def work() -> int:
        nonlocal runs
        runs += 1
        await asyncio.sleep(0.05)
        return 7

    flights = SingleFlight(concurrency=2, wait_seconds=1)
    assert await asyncio.gather(*(flights.run("k", work) for _ in range(5))) == [7] * 5
    assert runs == 1


async def test_a_joiner_outlives_the_cancelled_caller_that_ran_the_work() -> None:
    started = asyncio.Event()
    runs = 0

    async def work() -> str:
        nonlocal runs
        runs += 1
        started.set()
        await asyncio.sleep(0.1)
        return "built"

    flights = SingleFlight(concurrency=2, wait_seconds=1)
    leader = asyncio.ensure_future(flights.run("k", work))
    await started.wait()
    joiner = asyncio.ensure_future(flights.run("k", work))
    await asyncio.sleep(0)
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    assert await joiner == "built"
    assert runs == 2


async def test_a_cancelled_joiner_is_cancelled() -> None:
    async def work() -> str:
        await asyncio.sleep(0.2)
        return "built"

    flights = SingleFlight(concurrency=2, wait_seconds=1)
    leader = asyncio.ensure_future(flights.run("k", work))
    await asyncio.sleep(0.01)
    joiner = asyncio.ensure_future(flights.run("k", work))
    await asyncio.sleep(0.01)
    joiner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await joiner
    assert await leader == "built"
