"""Deadlock retries: a transaction Neo4j rolled back as a deadlock's victim runs again after
a few milliseconds, not after the driver's second.

Batches lock their users in one order (``relations/lock_users``), but Neo4j also takes
locks no query can order: the relationship-chain and relationship-group locks of nodes that
two transactions share only as neighbours. So writers in different processes (or a batch and
a background job) over overlapping users still meet a deadlock now and then, and Neo4j rolls
one of them back. The driver retries every transient error after 1 s, doubling: right for a
server that is restarting, far too long for a lock cycle that the rollback already broke. A
batch waits under the service's in-process locks of its users all that time, so one deadlock
stalled every write of those users for a second.

Policy: the unit of work turns a deadlock into ``Deadlock``, which the driver passes through
without retrying, and ``retry_deadlocks`` runs the whole transaction again after a random
wait of a few milliseconds, doubling per attempt up to a fraction of a second ("full jitter":
two victims of the same cycle rarely collide again), until NEO4J_RETRY_SECONDS have passed
(the policy ``deadlock_victims`` of ``concurrency/retries.py``, which names its waits); then
the deadlock error itself is raised (a 503 to a caller). Other transient errors (a server
stopping or starting) keep the driver's own retries within the same time budget, in a managed
transaction; a write sent as one auto-commit statement is retried by the store instead
(``Neo4jStore.one_statement``, the policy ``lost_statements``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import neo4j

from graphsvc.concurrency.retries import deadlock_victims, first_bare

T = TypeVar("T")
DEADLOCK_DETECTED = "Neo.TransientError.Transaction.DeadlockDetected"


class Deadlock(Exception):
    """A deadlock victim's error, carried past the driver's retries to ``retry_deadlocks``."""

    def __init__(self, error: neo4j.exceptions.Neo4jError) -> None:
        super().__init__(str(error))
        self.error = error


def is_deadlock(error: BaseException) -> bool:
    return isinstance(error, neo4j.exceptions.Neo4jError) and error.code == DEADLOCK_DETECTED


async def retry_deadlocks(attempt: Callable[[], Awaitable[T]], seconds: float) -> T:
    """Run ``attempt`` (a whole transaction) until it does not end in ``Deadlock``, or until
    ``seconds`` have passed, waiting with full jitter between attempts."""
    try:
        return await first_bare(lambda: deadlock_victims(seconds, Deadlock), attempt)
    except Deadlock as deadlock:
        raise deadlock.error from None
