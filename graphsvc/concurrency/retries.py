"""Retry policies, each written once with its reason (tenacity). A policy is a function that
returns a fresh ``AsyncRetrying`` (its state is one call's), used as
``await policy(...)(function, *args)``; what a policy retries is given by its caller, so the
policies know no store.

- ``deadlock_victims``: a transaction Neo4j rolled back as a deadlock's victim runs again
  within milliseconds, with full jitter (``adapters/neo4j/deadlocks.py`` says why).
- ``failed_jobs``: a durable job's run, again after 2, 4, 8, 16, 32 s; then it is left to its
  lease's end and claimed again (``jobs.py``).
- ``failed_rounds``: a background loop's round, again after a pause, for as long as the loop
  runs (``loops.py``): its work waits in its store meanwhile.
- ``stream_reads``: a live read of the event stream, again every second while Redis is down
  or failing over, as long as someone still watches.
- ``transient_reads``: a long job's pass over the graph (the ranker's training), again after
  1, 2, 4 s when Neo4j failed it on an error it says may pass.
- ``lost_statements``: a write sent as one auto-commit statement, again after an error the
  driver says may pass (a connection lost, a leader switching), as the driver itself retries a
  managed transaction.
- ``start_up_races``: a statement of a process's start-up (the schema, the rehearsal of the
  writes), again while it collides with another process starting at the same moment.

Every retry is logged, at the level its policy says, on this module's logger. On a hot path
(a batch's transaction), ``first_bare`` runs the first attempt outside its policy.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_base,
    retry_if_exception,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    stop_never,
    wait_exponential,
    wait_fixed,
    wait_random_exponential,
)

from graphsvc.concurrency.metrics import DEADLOCK_VICTIMS

log = logging.getLogger(__name__)
T = TypeVar("T")

DEADLOCK_FIRST_WAIT_SECONDS = 0.005  # the longest first wait; each retry's doubles
DEADLOCK_LONGEST_WAIT_SECONDS = 0.2
JOB_RETRIES = 5
JOB_LONGEST_WAIT_SECONDS = 60.0
STREAM_READ_WAIT_SECONDS = 1.0
TRANSIENT_RETRIES = 3
START_UP_FIRST_WAIT_SECONDS = 0.05  # the longest first wait; each retry's doubles
START_UP_LONGEST_WAIT_SECONDS = 1.0
LOST_FIRST_WAIT_SECONDS = 0.05  # the longest first wait; each retry's doubles
LOST_LONGEST_WAIT_SECONDS = 1.0


def _noted(what: str, level: int, *, traceback: bool = False) -> Callable[[RetryCallState], None]:
    """Log a retry: what failed, which attempt, why, and when it runs again."""

    def note(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        wait = state.upcoming_sleep
        log.log(
            level,
            "%s: attempt %d failed (%s); again in %.3f s",
            what,
            state.attempt_number,
            error,
            wait,
            exc_info=error if traceback else None,
        )

    return note


async def first_bare(policy: Callable[[], AsyncRetrying], attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt`` under the retry ``policy``, its first run outside it: making and driving a
    policy costs more CPU than a short statement takes, and nearly every first run succeeds. A
    first run that fails becomes the policy's first attempt (handed to it as failed, not run
    again), so what is retried, the waits, the log lines and the counts stay the policy's;
    its time limit counts from that failure."""
    try:
        return await attempt()
    except Exception as error:  # the policy decides what it retries
        failed: Exception | None = error

    async def again() -> T:
        nonlocal failed
        if failed is not None:
            error, failed = failed, None
            raise error
        return await attempt()

    return await policy()(again)


def deadlock_victims(seconds: float, victim: type[BaseException]) -> AsyncRetrying:
    """Run a whole transaction again while it ends as a deadlock's victim (``victim``), after
    a random wait of up to DEADLOCK_FIRST_WAIT_SECONDS, doubling per attempt up to
    DEADLOCK_LONGEST_WAIT_SECONDS (two victims of one cycle rarely collide again), until
    ``seconds`` (NEO4J_RETRY_SECONDS) would have passed; then the last victim's error is
    raised."""
    waits = (DEADLOCK_FIRST_WAIT_SECONDS, DEADLOCK_LONGEST_WAIT_SECONDS)
    return _full_jitter(retry_if_exception_type(victim), waits, seconds, _victim)


_noted_victim = _noted("deadlock victim", logging.DEBUG)


def _victim(state: RetryCallState) -> None:
    DEADLOCK_VICTIMS.inc()
    _noted_victim(state)


def failed_jobs(job: str) -> AsyncRetrying:
    """Run a durable job again after it failed (a store is down, a statement timed out),
    JOB_RETRIES times, after 2, 4, 8... s (at most a minute); then its error is raised."""
    return AsyncRetrying(
        retry=retry_if_exception_type(Exception),
        wait=wait_exponential(multiplier=2, max=JOB_LONGEST_WAIT_SECONDS),
        stop=stop_after_attempt(JOB_RETRIES + 1),
        before_sleep=_noted(f"job {job}", logging.WARNING, traceback=True),
        reraise=True,
    )


def failed_rounds(loop: str, seconds: float) -> AsyncRetrying:
    """Run a background loop's round again ``seconds`` after it failed, for ever (the loop
    is stopped by cancelling it, which is never retried)."""
    return AsyncRetrying(
        retry=retry_if_exception_type(Exception),
        wait=wait_fixed(seconds),
        stop=stop_never,
        before_sleep=_noted(f"{loop} round", logging.WARNING),
    )


def stream_reads(watched: Callable[[], bool]) -> AsyncRetrying:
    """Read the event stream again a second after a read failed, while ``watched()`` says
    someone still watches; then the read's error is raised."""
    return AsyncRetrying(
        retry=retry_if_exception_type(Exception),
        wait=wait_fixed(STREAM_READ_WAIT_SECONDS),
        stop=lambda _: not watched(),
        before_sleep=_noted("event stream read", logging.WARNING),
        reraise=True,
    )


def lost_statements(seconds: float, lost: Callable[[BaseException], bool]) -> AsyncRetrying:
    """Run an auto-commit write again after an error the driver would have retried in a
    managed transaction (``lost``: a connection lost or refused, a leader switching, a
    database starting), after a random wait of up to LOST_FIRST_WAIT_SECONDS, doubling up to
    LOST_LONGEST_WAIT_SECONDS, until ``seconds`` (NEO4J_RETRY_SECONDS) would have passed;
    then the last error is raised. Its statement must be safe to run twice: a connection
    lost after the commit leaves no word of it."""
    waits = (LOST_FIRST_WAIT_SECONDS, LOST_LONGEST_WAIT_SECONDS)
    noted = _noted("auto-commit write", logging.WARNING)
    return _full_jitter(retry_if_exception(lost), waits, seconds, noted)


def start_up_races(seconds: float, raced: Callable[[BaseException], bool]) -> AsyncRetrying:
    """Run a start-up statement again while it fails on another process doing the same work
    at the same moment (``raced`` says which errors those are: a schema rule the other
    created meanwhile, a deadlock between the two), after a random wait of up to
    START_UP_FIRST_WAIT_SECONDS, doubling up to START_UP_LONGEST_WAIT_SECONDS, until
    ``seconds`` would have passed; then the last error is raised. Processes that start
    together (an API and its workers) would otherwise fail their start-up on each other's."""
    waits = (START_UP_FIRST_WAIT_SECONDS, START_UP_LONGEST_WAIT_SECONDS)
    noted = _noted("start-up statement", logging.INFO)
    return _full_jitter(retry_if_exception(raced), waits, seconds, noted)


def _full_jitter(
    retry: retry_base,
    waits: tuple[float, float],
    seconds: float,
    before_sleep: Callable[[RetryCallState], None],
) -> AsyncRetrying:
    """Again while ``retry`` says so, after a random wait of up to ``waits[0]``, doubling up
    to ``waits[1]``, until ``seconds`` would have passed; then the last error is raised."""
    first, longest = waits
    return AsyncRetrying(
        retry=retry,
        wait=wait_random_exponential(multiplier=first, max=longest),
        stop=stop_before_delay(seconds),
        before_sleep=before_sleep,
        reraise=True,
    )


def transient_reads(job: str, transient: Callable[[BaseException], bool]) -> AsyncRetrying:
    """Run a long job's reads again after an error Neo4j says may pass (``transient``: a
    transaction an index build outdated, a leader switching), TRANSIENT_RETRIES times, after
    1, 2, 4 s; then the error is raised. A failed training would otherwise leave a stale model
    served until its next check."""
    return AsyncRetrying(
        retry=retry_if_exception(transient),
        wait=wait_exponential(multiplier=1, max=8),
        stop=stop_after_attempt(TRANSIENT_RETRIES + 1),
        before_sleep=_noted(job, logging.WARNING),
        reraise=True,
    )
