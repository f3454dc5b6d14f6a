"""Group commit: every waiter of a batch gets its answer, the batch's failure fails them all
together, a waiter that gives up (its request's deadline) takes nothing from the others, and
writes that close together are shared out among the free slots."""

from __future__ import annotations

import asyncio

import pytest

from graphsvc.concurrency.group_commit import GroupCommit, share_out


class Lost(ConnectionError):
    """The batch's connection died under its transaction."""


def batcher(commit, *, max_size: int = 4) -> GroupCommit[int, int]:
    return GroupCommit(commit, window_ms=5, max_size=max_size, concurrency=2)


async def test_a_batch_answers_each_write_with_its_own_outcome() -> None:
    async def commit(writes: list[int]) -> list[int | BaseException]:
        return [ValueError(w) if w == 3 else w * 10 for w in writes]

    group = batcher(commit)
    answers = await asyncio.gather(*(group.submit(w) for w in range(1, 5)), return_exceptions=True)
    assert answers[:2] == [10, 20] and answers[3] == 40
    assert isinstance(answers[2], ValueError)


async def test_a_batch_whose_connection_dies_fails_every_waiter_together() -> None:
    started = asyncio.Event()

    async def commit(writes: list[int]) -> list[int]:
        started.set()
        await asyncio.sleep(0.05)
        raise Lost("connection reset by peer")

    group = batcher(commit)
    waiters = [asyncio.ensure_future(group.submit(w)) for w in range(4)]
    await started.wait()
    done, pending = await asyncio.wait(waiters, timeout=5)
    assert not pending, "a waiter was left behind"
    assert all(isinstance(w.exception(), Lost) for w in done)


async def test_a_waiter_that_gives_up_leaves_the_batch_committing_for_the_others() -> None:
    committed: list[list[int]] = []
    release = asyncio.Event()

    async def commit(writes: list[int]) -> list[int]:
        await release.wait()
        committed.append(writes)
        return writes

    group = batcher(commit)
    impatient = asyncio.ensure_future(group.submit(1))
    patient = asyncio.ensure_future(group.submit(2))
    await asyncio.sleep(0.05)  # the batch is committing
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):  # as the request's deadline cancels it
            await impatient
    release.set()
    assert await patient == 2
    # its write stayed in its batch: applied, or not, as it goes
    assert sorted(w for writes in committed for w in writes) == [1, 2]


async def test_a_batch_cancelled_mid_commit_answers_every_waiter() -> None:
    async def commit(writes: list[int]) -> list[int]:
        await asyncio.sleep(3600)
        return writes

    group = batcher(commit)
    waiters = [asyncio.ensure_future(group.submit(w)) for w in range(3)]
    await asyncio.sleep(0.05)
    for task in asyncio.all_tasks():
        if task.get_coro().__qualname__.startswith("GroupCommit._run"):
            task.cancel()
    done, pending = await asyncio.wait(waiters, timeout=5)
    assert not pending
    assert all("cancelled" in str(w.exception()) for w in done)


def test_writes_closing_together_are_shared_out_among_the_free_slots() -> None:
    assert [share_out(16, 2, 16), share_out(17, 2, 16), share_out(40, 2, 16)] == [8, 9, 16]
    assert [share_out(1, 2, 16), share_out(5, 1, 16), share_out(5, 3, 2)] == [1, 5, 2]


async def test_a_burst_commits_in_half_batches_while_both_slots_are_free() -> None:
    sizes: list[int] = []
    at_once = 0
    both_running = asyncio.Event()

    async def commit(writes: list[int]) -> list[int]:
        nonlocal at_once
        sizes.append(len(writes))
        at_once += 1
        if at_once == 2:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), 5)
        at_once -= 1
        return writes

    group = batcher(commit, max_size=8)
    assert await asyncio.gather(*(group.submit(w) for w in range(8))) == list(range(8))
    assert sizes == [4, 4]  # one slot idle would have made it [8]
    # with one slot busy, the next batch takes up to the most a batch holds
    release = asyncio.Event()

    async def slow(writes: list[int]) -> list[int]:
        sizes.append(len(writes))
        await release.wait()
        return writes

    sizes.clear()
    group = batcher(slow, max_size=8)
    first = asyncio.ensure_future(group.submit(0))
    await asyncio.sleep(0.02)  # its window closed: it holds one slot
    rest = asyncio.gather(*(group.submit(w) for w in range(1, 9)))
    await asyncio.sleep(0.02)
    release.set()
    assert [await first, *await rest] == list(range(9))
    assert sizes == [1, 8]


async def test_writes_that_share_a_user_are_not_shared_out() -> None:
    """The service's own writes for one user (an import's) would only wait for each other."""
    sizes: list[int] = []

    async def commit(writes: list[int]) -> list[int]:
        sizes.append(len(writes))
        return writes

    group = GroupCommit(commit, window_ms=5, max_size=8, concurrency=2, share=False)
    assert await asyncio.gather(*(group.submit(w) for w in range(12))) == list(range(12))
    assert sizes == [8, 4]
