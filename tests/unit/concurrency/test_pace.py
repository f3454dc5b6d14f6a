"""A paced job keeps a store busy for its share of the time, and no more."""

from __future__ import annotations

import asyncio
import time

import pytest

from graphsvc.concurrency.pace import FULL_SPEED, Pace


async def test_a_paced_step_waits_for_the_rest_of_its_share() -> None:
    pace = Pace(0.25)
    started = time.monotonic()
    async with pace.step():
        await asyncio.sleep(0.02)
    # 0.02 s of work at a quarter's share: 0.06 s more of waiting
    assert time.monotonic() - started >= 0.08 - 0.005


async def test_full_speed_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("graphsvc.concurrency.pace.asyncio.sleep", wait)
    for _ in range(5):
        async with FULL_SPEED.step():
            pass
    assert waits == []


@pytest.mark.parametrize("share", [0, -0.5, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        Pace(share)
