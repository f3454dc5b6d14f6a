"""Deadlocks: a transaction Neo4j picks as a deadlock's victim runs again at once (not after
the driver's one-second back-off) and commits, a managed one or a single auto-commit
statement; a unit of one statement refuses a second; and a restarted service plans its write
statements before serving, changing nothing."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from graphsvc.adapters.neo4j.deadlocks import is_deadlock
from graphsvc.adapters.neo4j.store import Neo4jStore, OneStatementOnly, Statements
from graphsvc.bootstrap import Services
from graphsvc.settings import Settings
from tests.support.relay import relayed_store

UserIds = Callable[[str], str]


def lock(user_id: str) -> Mapping[str, Any]:
    """The parameters of relations/lock_users for one existing user (its clock ticks, so it is
    write-locked until the transaction ends)."""
    return {
        "users": [{"id": user_id, "create": False}],
    }


async def test_a_deadlock_victim_runs_again_and_both_commit(
    backends: Services, uid: UserIds, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = uid("dl.a"), uid("dl.b")
    await backends.relations.follow(a, b)  # both users exist
    store = backends.core.neo4j.store
    holding = {a: asyncio.Event(), b: asyncio.Event()}
    attempts: Counter[str] = Counter()

    def crosswise(first: str, second: str) -> Callable[[Statements], Any]:
        """Lock ``first``, wait until the other transaction holds ``second``, then lock it:
        two of these in opposite orders are a deadlock Neo4j must break."""

        async def work(run: Statements) -> int:
            attempts[first] += 1
            await run("relations/lock_users", lock(first), None)
            holding[first].set()
            await asyncio.wait_for(holding[second].wait(), timeout=30)
            (row,) = await run("relations/lock_users", lock(second), None)
            return int(row["locked"])

        return work

    caplog.set_level(logging.DEBUG)
    results = await asyncio.gather(
        store.transaction(crosswise(a, b)), store.transaction(crosswise(b, a))
    )
    assert results == [1, 1]  # both committed
    assert sorted(attempts.values()) == [1, 2], attempts  # one victim, run once more
    victims = [r for r in caplog.records if r.getMessage().startswith("deadlock victim")]
    assert len(victims) == 1, [r.getMessage() for r in victims]
    driver_retries = [r for r in caplog.records if "will be retried" in r.getMessage()]
    assert driver_retries == [], "the driver backed off itself"


async def test_is_deadlock_names_only_deadlocks(backends: Services) -> None:
    """A rule error (here: a syntax error) is not taken for a deadlock and is not retried."""
    store = backends.core.neo4j.store
    attempts = 0

    async def work(run: Statements) -> None:
        nonlocal attempts
        attempts += 1
        await run("relations/lock_users", {"users": "not a list"}, None)

    with pytest.raises(Exception) as raised:
        await store.transaction(work)
    assert attempts == 1
    assert not is_deadlock(raised.value)


async def test_rehearsing_the_write_statements_changes_nothing(backends: Services) -> None:
    count = "MATCH (n) RETURN count(n) AS nodes, COUNT { ()-[]->() } AS edges"

    async def totals() -> tuple[int, int]:
        records, _, _ = await backends.core.neo4j.store.driver.execute_query(count)
        return records[0]["nodes"], records[0]["edges"]

    before = await totals()
    await backends.core.neo4j.edges.prepare()
    assert await totals() == before
    ghosts, _, _ = await backends.core.neo4j.store.driver.execute_query(
        "MATCH (u:User) WHERE u.id STARTS WITH 'rehearsal:' RETURN count(u) AS n"
    )
    assert ghosts[0]["n"] == 0


async def test_a_single_statement_victim_runs_again_and_both_commit(
    backends: Services, uid: UserIds
) -> None:
    """A batch sent as one auto-commit statement (``one_statement``) meets a deadlock as a
    managed transaction does: the victim, whichever it is, runs again and both commit."""
    a, b = uid("dl1.a"), uid("dl1.b")
    await backends.relations.follow(a, b)  # both users exist
    store = backends.core.neo4j.store
    holding_a, attempts = asyncio.Event(), Counter[str]()

    async def managed(run: Statements) -> int:
        attempts["managed"] += 1
        await run("relations/lock_users", lock(a), None)
        holding_a.set()
        if attempts["managed"] == 1:  # a victim's second run finds nothing blocked
            await wait_until_blocked(store, 30)
        (row,) = await run("relations/lock_users", lock(b), None)
        return int(row["locked"])

    async def single(run: Statements) -> int:
        attempts["single"] += 1
        await asyncio.wait_for(holding_a.wait(), timeout=30)
        # b, then a: waits for a while holding b, where the managed transaction goes next
        users = [{"id": b, "create": False}, {"id": a, "create": False}]
        (row,) = await run("relations/lock_users", {"users": users}, None)
        return int(row["locked"])

    results = await asyncio.gather(store.transaction(managed), store.one_statement(single))
    assert results == [1, 2]  # both committed
    assert sorted(attempts.values()) == [1, 2], attempts  # one victim, run once more


async def wait_until_blocked(store: Neo4jStore, seconds: float) -> None:
    """Until a transaction waits for a lock (its status says it is blocked), polled."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        records, _, _ = await store.driver.execute_query(
            "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' "
            "RETURN count(*) AS blocked"
        )
        if records[0]["blocked"]:
            return
        await asyncio.sleep(0.02)


async def test_one_statement_refuses_a_second_statement(backends: Services, uid: UserIds) -> None:
    """A second statement would commit apart from the first: it is refused unsent."""
    user = uid("one.a")
    await backends.relations.follow(user, uid("one.b"))
    store = backends.core.neo4j.store

    async def two(run: Statements) -> None:
        await run("relations/lock_users", lock(user), None)
        await run("relations/lock_users", lock(user), None)

    with pytest.raises(OneStatementOnly):
        await store.one_statement(two)


async def test_a_single_statement_write_whose_connection_was_lost_runs_again(
    backends: Services, server_settings: Settings, uid: UserIds, caplog: pytest.LogCaptureFixture
) -> None:
    """The driver retries a managed transaction whose connection was lost, not an auto-commit
    statement: ``one_statement`` runs it again itself, on a new connection, and it commits."""
    user = uid("lost.a")
    await backends.relations.follow(user, uid("lost.b"))  # the user exists
    async with relayed_store(server_settings, retry_seconds=10.0, tx_timeout=5) as (relay, store):
        relay.cut()  # the pooled connection is dead; the driver learns it on its next use
        caplog.set_level(logging.WARNING)
        (row,) = await store.one_statement(lambda run: run("relations/lock_users", lock(user)))
        assert row["locked"] == 1
        retried = [r for r in caplog.records if r.getMessage().startswith("auto-commit write")]
        assert retried, "the lost connection was not what the statement met"
