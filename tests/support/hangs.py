"""What a test that waits too long was waiting on. An awaited call given a bound here that
runs past it fails its test, and the await chain of every task of the loop is written to
HANGS, which `make test` prints after the run: a hang shows where it waits (the timeout's
own stack ends in the event loop's select, which says nothing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from tests.support.paths import ROOT

T = TypeVar("T")
HANGS = ROOT / ".local" / "test-hangs.log"


async def bounded(awaitable: Awaitable[T], seconds: float, what: str) -> T:
    """``awaitable``, failing the test after ``seconds`` with every task's await chain (read
    before the awaitable is cancelled, which unwinds its own)."""
    running = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({running}, timeout=seconds)
    if done:
        return running.result()
    chains = "\n".join(_chain(task) for task in asyncio.all_tasks())
    HANGS.parent.mkdir(parents=True, exist_ok=True)
    with HANGS.open("a", encoding="utf-8") as log:
        log.write(f"== {what}: no answer in {seconds:g} s; the loop's tasks:\n{chains}\n")
    running.cancel()
    await asyncio.wait({running}, timeout=10)
    raise AssertionError(f"{what}: no answer in {seconds:g} s (await chains: {HANGS})")


def _chain(task: asyncio.Task[Any]) -> str:
    """A task's awaits from its coroutine down to what it waits on."""
    lines = [f"- {task.get_name()}"]
    step: Any = task.get_coro()
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
        if frame is None:
            lines.append(f"    waits on {step!r}"[:300])
            break
        lines.append(f"    {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        step = getattr(step, "cr_await", None) or getattr(step, "ag_await", None)
    return "\n".join(lines)
