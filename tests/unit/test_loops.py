"""The one loop every background worker runs (``concurrency/loops.py``): a round again at once
while it says more work waits, a wait (or a wake-up) otherwise, a failed round retried, and
a stop that ends it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from graphsvc.concurrency.loops import stopped, supervise


async def test_a_round_runs_again_at_once_while_work_waits_and_survives_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcomes: list[object] = [True, True, ConnectionError("a store is down"), False]
    seen: list[object] = []
    done = asyncio.Event()

    async def one_round() -> bool:
        outcome = outcomes.pop(0) if outcomes else False
        seen.append(outcome)
        if not outcomes:
            done.set()
        if isinstance(outcome, Exception):
            raise outcome
        return bool(outcome)

    caplog.set_level(logging.WARNING)
    task = asyncio.get_running_loop().create_task(
        supervise("test", one_round, 60.0, retry_seconds=0.01)
    )
    await asyncio.wait_for(done.wait(), timeout=5)
    await stopped([task], seconds=5)
    assert task.cancelled()
    assert [type(o) for o in seen] == [bool, bool, ConnectionError, bool]
    assert any(
        "test round: attempt 1 failed (a store is down)" in r.getMessage() for r in caplog.records
    )


async def test_a_waiting_loop_runs_its_next_round_when_woken() -> None:
    rounds = 0
    woken = asyncio.Event()

    async def one_round() -> bool:
        nonlocal rounds
        rounds += 1
        return False

    async def wake(seconds: float) -> None:
        assert seconds == 60.0
        await woken.wait()
        woken.clear()

    task = asyncio.get_running_loop().create_task(supervise("test", one_round, 60.0, wake))
    await asyncio.sleep(0.05)
    assert rounds == 1  # waits: no work, and nothing woke it
    woken.set()
    await asyncio.sleep(0.05)
    assert rounds == 2
    await stopped([task], seconds=5)
    assert task.cancelled()
