"""The per-key locks that order one user's writes in a process: first come first served per
key, also when a holder waits for several keys at once (no servers needed)."""

from __future__ import annotations

import asyncio

import pytest

from graphsvc.concurrency.keyed_lock import KeyedLock


async def _hold(
    locks: KeyedLock,
    keys: tuple[str, ...],
    log: list[str],
    name: str,
    release: asyncio.Event | None = None,
) -> None:
    async with locks.hold_all(*keys):
        log.append(name)
        if release is not None:
            await release.wait()


async def test_a_holder_waiting_for_one_key_is_not_overtaken_on_its_others() -> None:
    locks, log, release = KeyedLock(), [], asyncio.Event()
    busy = asyncio.create_task(_hold(locks, ("m",), log, "busy", release))
    await asyncio.sleep(0)
    first = asyncio.create_task(_hold(locks, ("m", "x"), log, "first"))  # waits for m
    await asyncio.sleep(0)
    later = asyncio.create_task(_hold(locks, ("x",), log, "later"))  # asked for x after first
    await asyncio.sleep(0.01)
    assert log == ["busy"]  # later did not take x while first waited for m
    release.set()
    await asyncio.gather(busy, first, later)
    assert log == ["busy", "first", "later"]


async def test_holders_of_the_same_keys_in_opposite_orders_do_not_deadlock() -> None:
    locks, log = KeyedLock(), []
    tasks = [
        asyncio.create_task(_hold(locks, keys, log, str(n)))
        for n, keys in enumerate([("a", "b"), ("b", "a")] * 50)
    ]
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)
    assert log == [str(n) for n in range(100)]  # and in the order they asked
    assert not locks._queues


async def test_a_waiter_that_gives_up_lets_no_one_past_the_holder() -> None:
    locks, log, release = KeyedLock(), [], asyncio.Event()
    holder = asyncio.create_task(_hold(locks, ("k",), log, "holder", release))
    await asyncio.sleep(0)
    quitter = asyncio.create_task(_hold(locks, ("k",), log, "quitter"))
    await asyncio.sleep(0)
    patient = asyncio.create_task(_hold(locks, ("k",), log, "patient"))
    await asyncio.sleep(0.01)
    quitter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await quitter
    await asyncio.sleep(0.01)
    assert log == ["holder"]  # patient still waits for the holder
    release.set()
    await asyncio.gather(holder, patient)
    assert log == ["holder", "patient"]
    assert not locks._queues
