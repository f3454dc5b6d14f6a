"""The one loop every background worker runs (``concurrency/loops.py``): a round again at once
while it says more work waits, a wait (or a wake-up) otherwise, a failed round retried, and
a stop that ends it; and the loops of a process kept running: one that ends is logged and
started again, after a wait that grows while it keeps ending."""

from __future__ import annotations

import asyncio
import logging

import pytest

from graphsvc.concurrency.loops import keep_running, restart_wait, stopped, supervise


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


def test_a_loop_that_keeps_ending_waits_twice_as_long_each_time_up_to_the_longest() -> None:
    waits: list[float] = []
    last = None
    for _ in range(8):
        last = restart_wait(last, ran=0.5)
        waits.append(last)
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert restart_wait(60.0, ran=61.0) == 1.0  # it ran a while: back to the first wait


async def test_a_loop_that_ends_is_started_again_and_a_stop_ends_them_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    starts = {"failing": 0, "cancelled": 0, "steady": 0}
    again, fourth = asyncio.Event(), asyncio.Event()

    async def failing() -> None:
        starts["failing"] += 1
        if starts["failing"] == 4:
            fourth.set()
        raise RuntimeError("a bug")

    async def cancelled() -> None:  # as a library that cancels the task it runs in
        starts["cancelled"] += 1
        if starts["cancelled"] == 1:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        else:
            again.set()
        await asyncio.sleep(60)

    async def steady() -> None:
        starts["steady"] += 1
        await asyncio.sleep(60)

    caplog.set_level(logging.ERROR)
    loops = {"failing": failing, "cancelled": cancelled, "steady": steady}
    kept = asyncio.get_running_loop().create_task(keep_running(loops, first=0.01, longest=0.04))
    await asyncio.wait_for(again.wait(), timeout=5)
    await asyncio.wait_for(fourth.wait(), timeout=5)
    await stopped([kept], seconds=5)
    assert kept.cancelled()
    assert starts["cancelled"] == 2 and starts["steady"] == 1
    lines = [r.getMessage() for r in caplog.records]
    assert "loop failing ended (RuntimeError: a bug); starting it again in 0.0 s" in lines
    assert any(line.startswith("loop cancelled ended (it was cancelled") for line in lines)
    assert not any("steady" in line for line in lines)
    failing_logs = [r for r in caplog.records if "loop failing" in r.getMessage()]
    assert failing_logs[0].exc_info is not None  # the traceback of what ended it
    left = [t for t in asyncio.all_tasks() if t.get_name() in loops]
    assert not left  # every loop stopped with the process


async def test_a_loop_whose_cancellation_was_swallowed_still_stops() -> None:
    import asyncio
    import contextlib

    from graphsvc.concurrency.loops import stop_if_asked, stopped

    rounds = 0

    async def loop() -> None:  # as a library awaited by a loop may do
        nonlocal rounds
        while True:
            stop_if_asked()
            rounds += 1
            with contextlib.suppress(asyncio.CancelledError):  # swallowed
                await asyncio.sleep(0.01)

    task = asyncio.get_running_loop().create_task(loop())
    await asyncio.sleep(0.05)
    await stopped([task], seconds=5)
    assert task.done() and task.cancelled()

    give_up = asyncio.Event()

    async def stubborn() -> None:  # ignores cancellation until the test lets it go
        while not give_up.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.01)

    other = asyncio.get_running_loop().create_task(stubborn())
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    await stopped([other], seconds=0.2)  # bounded: it gives up on a task that never stops
    assert asyncio.get_running_loop().time() - started < 2 and not other.done()
    give_up.set()
    await other  # no task left behind in the session's loop
