"""A hot path's first attempt runs outside its retry policy (``first_bare``); what the policy
retries, logs and counts does not change."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pytest
from prometheus_client import REGISTRY
from tenacity import AsyncRetrying

from graphsvc.concurrency.retries import deadlock_victims, first_bare


class Victim(Exception):
    pass


class Other(Exception):
    pass


def victims() -> float:
    return REGISTRY.get_sample_value("graphsvc_deadlock_victims_total") or 0.0


def attempts(*outcomes: BaseException | str) -> tuple[list[int], Callable[[], Awaitable[str]]]:
    """An attempt that raises or returns each of ``outcomes`` in turn, and its run count."""
    runs: list[int] = []

    async def attempt() -> str:
        runs.append(len(runs) + 1)
        outcome = outcomes[len(runs) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return runs, attempt


async def test_a_first_run_that_succeeds_never_makes_the_policy() -> None:
    runs, attempt = attempts("done")

    def policy() -> AsyncRetrying:
        raise AssertionError("the policy was made for a first run that succeeded")

    assert await first_bare(policy, attempt) == "done"
    assert runs == [1]


async def test_a_failed_first_run_is_the_policys_first_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs, attempt = attempts(Victim("one"), Victim("two"), "done")
    counted = victims()
    with caplog.at_level(logging.DEBUG, logger="graphsvc.concurrency.retries"):
        assert await first_bare(lambda: deadlock_victims(5, Victim), attempt) == "done"
    assert runs == [1, 2, 3]  # the failed first run is not run again
    assert victims() - counted == 2
    logged = [r.getMessage() for r in caplog.records]
    assert logged[0].startswith("deadlock victim: attempt 1 failed (one)")
    assert logged[1].startswith("deadlock victim: attempt 2 failed (two)")


async def test_a_first_failure_the_policy_does_not_retry_is_raised_as_it_was() -> None:
    error = Other("not a victim")
    runs, attempt = attempts(error, "never")
    with pytest.raises(Other) as raised:
        await first_bare(lambda: deadlock_victims(5, Victim), attempt)
    assert raised.value is error and runs == [1]


async def test_the_policys_time_limit_ends_the_retries() -> None:
    runs, attempt = attempts(*(Victim(str(n)) for n in range(1_000)))
    with pytest.raises(Victim):
        await first_bare(lambda: deadlock_victims(0.05, Victim), attempt)
    assert 2 <= len(runs) < 1_000
