"""Every Neo4j statement runs with a transaction timeout: one that runs past it is cut off by
Neo4j, and the caller gets ``GraphTimeout`` (a 503 ``graph_timeout``), never a hang; one whose
connection falls silent fails the same way, a few seconds later.

A statement is kept running as long as needed by making it wait for a user's lock that
another transaction holds: reads never wait for locks, so the auto-commit path (the reads')
is driven with a locking statement run through ``read``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import neo4j
import pytest

from graphsvc.adapters.neo4j.queries import query
from graphsvc.adapters.neo4j.store import SILENCE_SECONDS, Neo4jStore
from graphsvc.bootstrap import Services
from graphsvc.domain.errors import GraphTimeout
from graphsvc.settings import Settings
from tests.support.driver import Driver, refused
from tests.support.relay import relayed_store

UserIds = Callable[[str], str]


def store_with(backends: Services, timeout: float, job_timeout: float = 60.0) -> Neo4jStore:
    own = backends.core.neo4j.store
    return Neo4jStore(
        own.driver, own.database, own.retry_seconds, timeout=timeout, job_timeout=job_timeout
    )


@asynccontextmanager
async def holding_lock(backends: Services, user_id: str) -> AsyncIterator[None]:
    """The user's write lock, held by another transaction (as a batch of edge writes takes
    it) until the block ends: a statement that needs it waits, for as long as it may."""
    store = backends.core.neo4j.store
    async with store.driver.session(database=store.database) as session:
        tx = await session.begin_transaction()
        try:
            await (await tx.run(query("relations/lock_users"), lock_params(user_id))).consume()
            yield
        finally:
            await tx.rollback()


def lock_params(user_id: str) -> dict[str, object]:
    users = [{"id": user_id, "create": True}]
    return {"users": users}


async def test_an_auto_commit_statement_past_its_timeout_is_cut_off(
    backends: Services, uid: UserIds
) -> None:
    """A statement run as reads are (auto-commit), kept waiting: cut off by Neo4j at the
    timeout, and raised as the domain's 503, naming the setting."""
    store = store_with(backends, timeout=0.3)
    user = uid("locked")
    async with holding_lock(backends, user):
        with pytest.raises(GraphTimeout) as raised:
            await asyncio.wait_for(
                store.read("relations/lock_users", lock_params(user), fresh=True), timeout=30
            )
    assert raised.value.status == 503 and raised.value.code == "graph_timeout"
    assert "0.3 s" in raised.value.message
    assert "NEO4J_TX_TIMEOUT_SECONDS" in raised.value.message
    assert isinstance(raised.value.__cause__, neo4j.exceptions.ClientError)


async def test_a_long_jobs_statement_has_the_job_timeout(backends: Services, uid: UserIds) -> None:
    """The same statement marked as a long job's outlives the short timeout: it finishes once
    the lock is let go, seconds later; a store of long jobs gives every statement that
    timeout, and names it when it runs out."""
    store = store_with(backends, timeout=0.3, job_timeout=60)
    user = uid("locked")
    async with holding_lock(backends, user):
        waiting = asyncio.create_task(
            store.read("relations/lock_users", lock_params(user), fresh=True, job=True)
        )
        await asyncio.sleep(3)  # ten times the short timeout
        assert not waiting.done()
    (row,) = await asyncio.wait_for(waiting, timeout=30)
    assert row["locked"] == 1
    own = backends.core.neo4j.store
    jobs = Neo4jStore(
        own.driver, own.database, own.retry_seconds, timeout=60, job_timeout=0.3, jobs=True
    )
    async with holding_lock(backends, user):
        with pytest.raises(GraphTimeout) as raised:
            await asyncio.wait_for(
                jobs.read("relations/lock_users", lock_params(user), fresh=True), timeout=30
            )
    assert "NEO4J_JOB_TIMEOUT_SECONDS" in raised.value.message


async def test_a_write_waiting_for_a_lock_past_its_timeout_is_cut_off(
    backends: Services, uid: UserIds
) -> None:
    """The same in a managed transaction (as writes run): cut off, and not retried."""
    store = store_with(backends, timeout=0.3)
    user = uid("locked")
    async with holding_lock(backends, user):
        with pytest.raises(GraphTimeout):
            await asyncio.wait_for(
                store.write("relations/lock_users", lock_params(user)), timeout=30
            )


async def test_a_request_past_the_timeout_is_a_503_naming_it(
    make_driver: Callable[..., Driver], backends: Services, uid: UserIds
) -> None:
    """A follow whose user another transaction holds: its statement waits for the lock until
    NEO4J_TX_TIMEOUT_SECONDS, then the request is answered 503 (and the follow not made)."""
    fan, idol = uid("fan"), uid("idol")
    async with make_driver(neo4j_tx_timeout_seconds=0.5) as driver:
        await driver.follows(fan, uid("warm"))
        async with holding_lock(backends, fan):
            answered = asyncio.wait_for(driver.follow(fan, idol), timeout=30)
            error = await refused(answered, 503, "graph_timeout")
        assert "0.5 s" in error.message and "NEO4J_TX_TIMEOUT_SECONDS" in error.message
        assert error.retry_after == 1
        assert (await driver.relation(fan, idol)).following is False


async def test_a_statement_whose_connection_falls_silent_times_out(
    backends: Services, server_settings: Settings, uid: UserIds
) -> None:
    """No answer and no error: the statement fails as timed out a few seconds after its own
    timeout (SILENCE_SECONDS), a write as a read, instead of waiting for the operating system
    to give up on the connection."""
    async with relayed_store(server_settings, retry_seconds=1.0, tx_timeout=0.5) as (relay, store):
        user = uid("silent")
        relay.silent.set()
        for statement in (
            store.read("relations/lock_users", lock_params(user)),
            store.one_statement(lambda run: run("relations/lock_users", lock_params(user))),
            store.write("relations/lock_users", lock_params(user)),
        ):
            started = time.monotonic()
            with pytest.raises(GraphTimeout, match="NEO4J_TX_TIMEOUT_SECONDS"):
                await statement
            assert time.monotonic() - started < 0.5 + SILENCE_SECONDS + 5
