"""The Neo4j store: the driver and the runner of named queries.

``Neo4jStore`` runs the named queries of ``cypher/`` (reads as auto-commit transactions,
writes as managed ones, or as one auto-commit statement); the family adapters beside this
module (relations, pages, snapshots, moderation, outbox, suggestions, bulk) run their queries
through it. Knows Cypher
(by query name) and the driver; knows nothing of HTTP or Redis.

Timeouts: every statement runs in a transaction with a timeout, after which Neo4j cuts it off
(and rolls back whatever it wrote); the store raises ``GraphTimeout`` for it. A store built
for the API uses NEO4J_TX_TIMEOUT_SECONDS; one built for the workers and the CLI, and any
statement its caller marks ``job=True`` (bulk loads, training reads, a walk of every follower,
the schema), uses NEO4J_JOB_TIMEOUT_SECONDS. A statement, a read or a write, whose connection
goes silent (a peer gone without a word; the driver's reads have no timeout of their own when
Neo4j hints none) fails the same way SILENCE_SECONDS past its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase

from graphsvc.adapters.neo4j.deadlocks import Deadlock, is_deadlock, retry_deadlocks
from graphsvc.adapters.neo4j.queries import query, statements, with_prelude
from graphsvc.concurrency.retries import first_bare, lost_statements, start_up_races
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.errors import GraphTimeout
from graphsvc.settings import Neo4jSettings

log = logging.getLogger(__name__)

T = TypeVar("T")
# Runs one named statement of a transaction: (query name, params, prelude) -> its records.
Statements = Callable[[str, Mapping[str, Any], str | None], Awaitable[list[neo4j.Record]]]
# What a caller that can carry on without Neo4j for a moment catches.
STORE_DOWN = (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, GraphTimeout)
# Neo4j's codes for a transaction cut off by its timeout (the client's, or the server's own
# db.transaction.timeout), and for one cut off while it waited for a lock (a timeout too, as
# every transaction has one, unless an operator terminated it or the server is stopping).
TIMED_OUT = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.TransientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.LockClientStopped",
    }
)
# A Neo4j that stopped, restarted or cannot be reached: what it prepared for this process (the
# plans of its statements) may be gone.
LOST = (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired)
DATABASE_UNAVAILABLE = "Neo.TransientError.General.DatabaseUnavailable"
# What a long job meets that may not be there when it runs again: a transaction Neo4j says may
# succeed if retried (one outdated by an index build, a deadlock), a server that is restarting
# (Neo4j's offline import restarts it).
NEO4J_TRANSIENT = (neo4j.exceptions.TransientError, *LOST)
# Neo4j's codes for a schema rule that another transaction created between a statement's `IF
# NOT EXISTS` check and its own creation: `IF NOT EXISTS` does not make creations that run at
# the same moment safe, so of processes starting together on an empty database (an API and
# its workers), all but one meet these for a rule they all create.
RULE_CREATED_MEANWHILE = frozenset(
    {
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        "Neo.ClientError.Schema.IndexAlreadyExists",
        "Neo.ClientError.Schema.ConstraintAlreadyExists",
        "Neo.ClientError.Schema.IndexWithNameAlreadyExists",
        "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists",
    }
)
# How long past its transaction's timeout a statement may go unanswered before the client
# gives up on its connection (the server cuts the transaction off at the timeout itself).
SILENCE_SECONDS = 5.0
# How long a process's start-up waits out the start-up of others beside it (their schema
# statements and rehearsals colliding with its own) before it gives up.
START_UP_RACE_SECONDS = 60.0


class OneStatementOnly(RuntimeError):
    """A unit of work given one auto-commit statement asked for a second."""


def open_driver(settings: Neo4jSettings) -> AsyncDriver:
    return AsyncGraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_user, settings.neo4j_password),
        max_connection_pool_size=settings.neo4j_pool_size,
        # A write to an unreachable server fails in seconds (a 503), not after the driver's
        # default 30 s of retries.
        max_transaction_retry_time=settings.neo4j_retry_seconds,
        connection_timeout=settings.neo4j_connect_timeout,
        connection_acquisition_timeout=settings.neo4j_connect_timeout
        + settings.neo4j_retry_seconds,
        # Labels such as :Inactive exist only once used; warnings on every query are noise.
        notifications_min_severity="OFF",
    )


def _runner(
    target: neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction | neo4j.AsyncSession,
    bounded: Callable[[str], str | neo4j.Query] = str,
) -> Statements:
    """Named statements run on ``target`` (a transaction, or a session's auto-commit
    transactions), each text made a query by ``bounded`` (its timeout)."""

    async def run(
        name: str, params: Mapping[str, Any], prelude: str | None = None
    ) -> list[neo4j.Record]:
        text = with_prelude(prelude, name) if prelude else query(name)
        result = await target.run(bounded(text), params)
        return [record async for record in result]  # an auto-commit's last once committed

    return run


def _once(run: Statements) -> Statements:
    """``run`` for one statement (``Neo4jStore.one_statement``): a second is refused before
    anything is sent."""
    sent = False

    async def once(
        name: str, params: Mapping[str, Any], prelude: str | None = None
    ) -> list[neo4j.Record]:
        nonlocal sent
        if sent:
            raise OneStatementOnly(name)
        sent = True
        return await run(name, params, prelude)

    return once


@asynccontextmanager
async def _answered(seconds: float, timed_out: Callable[[], GraphTimeout]) -> AsyncIterator[None]:
    """No answer within the statement's timeout (``seconds``) and SILENCE_SECONDS more: the
    connection is given up (the driver drops it) and the statement fails as timed out. A
    write's outcome is then unknown, as after any lost connection: its outbox event says."""
    try:
        async with asyncio.timeout(seconds + SILENCE_SECONDS):
            yield
    except TimeoutError as error:
        raise timed_out() from error


def _lost(error: BaseException) -> bool:
    """An error the driver retries in a managed transaction, and which ``one_statement``
    retries itself: not a deadlock (``retry_deadlocks`` ran those out), nor a timeout."""
    if isinstance(error, neo4j.exceptions.Neo4jError) and (
        is_deadlock(error) or error.code in TIMED_OUT
    ):
        return False
    retryable = isinstance(error, neo4j.exceptions.Neo4jError | neo4j.exceptions.DriverError)
    return retryable and error.is_retryable()


async def _marking_deadlocks(work: Callable[[Statements], Awaitable[T]], run: Statements) -> T:
    """``work`` with a deadlock's victim marked ``Deadlock``, which the driver passes through
    to ``retry_deadlocks`` without retrying it itself."""
    try:
        return await work(run)
    except neo4j.exceptions.TransientError as error:
        if is_deadlock(error):
            raise Deadlock(error) from error
        raise


def event_id() -> str:
    """A new outbox event id (unique per change: consumers drop repeats by it)."""
    return uuid.uuid4().hex


def raced(error: BaseException) -> bool:
    """Whether a start-up statement failed on another process's start-up beside it: a
    schema rule the other created meanwhile (the statement, run again, finds the rule there
    and does nothing: the rule exists, as it wanted), or a transient error (a deadlock
    between their schema locks, a transaction outdated by the other's schema change).
    Timeouts are not: they are the statement's own."""
    if not isinstance(error, neo4j.exceptions.Neo4jError) or error.code in TIMED_OUT:
        return False
    return error.code in RULE_CREATED_MEANWHILE or isinstance(
        error, neo4j.exceptions.TransientError
    )


async def at_start_up(work: Callable[[], Awaitable[T]]) -> T:
    """``work`` (a start-up statement), again while it fails on another process's start-up
    (``raced``), for up to START_UP_RACE_SECONDS."""

    async def attempt() -> T:  # a coroutine function: tenacity awaits only those
        return await work()

    return await start_up_races(START_UP_RACE_SECONDS, raced)(attempt)


class Neo4jStore:
    """Runs named queries. Reads are auto-commit transactions (one round trip, where a
    managed transaction takes two, and a short read's time is mostly its round trips);
    ``fresh`` reads go where writes go (the cluster leader), so they see every commit.
    Writes run in managed transactions: a deadlock's victim runs again within milliseconds
    (``deadlocks``), other transient errors are retried by the driver; both for up to
    ``retry_seconds``. A write of one statement may run as an auto-commit transaction
    (``one_statement``, one round trip), retried the same ways by the store itself. Each
    transaction has ``timeout`` seconds (``job_timeout`` for a statement marked ``job``, and
    for all of a store built with ``jobs``), past which it is cut off and ``GraphTimeout``
    raised: a timed-out transaction is never retried."""

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        retry_seconds: float,
        *,
        timeout: float,
        job_timeout: float,
        jobs: bool = False,
    ) -> None:
        self.driver = driver
        self.database = database
        self.retry_seconds = retry_seconds
        self.timeout = timeout
        self.job_timeout = job_timeout
        self.jobs = jobs
        # What is done again once Neo4j was lost (``WarmUp.lost``), before its next use.
        self.warm_ups: list[WarmUp] = []

    def _lost(self) -> None:
        for warm_up in self.warm_ups:
            warm_up.lost()

    def _seconds(self, job: bool) -> float:
        return self.job_timeout if job or self.jobs else self.timeout

    @contextmanager
    def _bounded(self, job: bool) -> Iterator[None]:
        """A transaction cut off by its timeout as ``GraphTimeout``; a Neo4j lost, told to
        what prepared it."""
        try:
            yield
        except LOST:
            self._lost()
            raise
        except neo4j.exceptions.Neo4jError as error:
            if error.code == DATABASE_UNAVAILABLE:
                self._lost()
            if error.code not in TIMED_OUT:
                raise
            raise self._timed_out(job) from error

    def _timed_out(self, job: bool) -> GraphTimeout:
        long = job or self.jobs
        setting = "NEO4J_JOB_TIMEOUT_SECONDS" if long else "NEO4J_TX_TIMEOUT_SECONDS"
        return GraphTimeout(self._seconds(job), setting)

    def _session(self, mode: str = neo4j.WRITE_ACCESS) -> neo4j.AsyncSession:
        return self.driver.session(
            database=self.database, default_access_mode=mode, bookmark_manager=None
        )

    def _answered(self, job: bool) -> contextlib.AbstractAsyncContextManager[None]:
        return _answered(self._seconds(job), partial(self._timed_out, job))

    def _query(self, text: str, job: bool) -> neo4j.Query:
        return neo4j.Query(text, timeout=self._seconds(job))  # type: ignore[arg-type]

    async def read(
        self, name: str, params: Mapping[str, Any], *, fresh: bool = False, job: bool = False
    ) -> list[neo4j.Record]:
        mode = neo4j.WRITE_ACCESS if fresh else neo4j.READ_ACCESS
        with self._bounded(job):
            async with self._answered(job), self._session(mode) as session:
                result = await session.run(self._query(query(name), job), params)
                return [record async for record in result]

    async def write(
        self, name: str, params: Mapping[str, Any], *, job: bool = False
    ) -> list[neo4j.Record]:
        return await self.transaction(lambda run: run(name, params, None), job=job)

    async def transaction(
        self, work: Callable[[Statements], Awaitable[T]], *, job: bool = False
    ) -> T:
        """Several named statements in one managed write transaction: ``work`` gets a runner
        (name, params -> records) and is run again from the start if the transaction is
        retried (a deadlock, a leader switch), so it must only read what it wrote."""

        async def unit(tx: neo4j.AsyncManagedTransaction) -> T:
            return await _marking_deadlocks(work, _runner(tx))

        bounded = neo4j.unit_of_work(timeout=self._seconds(job))(unit)

        async def attempt() -> T:
            async with self._answered(job), self._session() as session:
                return await session.execute_write(bounded)

        with self._bounded(job):
            return await retry_deadlocks(attempt, self.retry_seconds)

    async def one_statement(
        self, work: Callable[[Statements], Awaitable[T]], *, job: bool = False
    ) -> T:
        """``work``'s single statement as an auto-commit transaction: one round trip (its
        records, then its commit, answer one message), where a managed transaction takes
        three (begin, run, commit). A deadlock's victim runs again as in ``transaction``;
        so does a statement that met an error the driver would have retried in a managed
        transaction (a connection lost, a leader switching: ``lost_statements``), which the
        driver does not retry here. A connection lost after the commit leaves no word of it,
        so the statement must be safe to run twice (a batch of follows is: a repeat changes
        nothing and says so). ``work`` must run exactly one statement: a second would commit
        apart from the first, so it is refused (``OneStatementOnly``) before it is sent."""

        async def attempt() -> T:
            async with self._answered(job), self._session() as session:
                bounded = partial(self._query, job=job)
                return await _marking_deadlocks(work, _once(_runner(session, bounded)))

        with self._bounded(job):
            return await first_bare(
                lambda: lost_statements(self.retry_seconds, _lost),
                partial(retry_deadlocks, attempt, self.retry_seconds),
            )

    async def rehearse(self, work: Callable[[Statements], Awaitable[T]]) -> T:
        """Run ``work``'s statements in a transaction that is then rolled back: Neo4j plans
        and compiles them, and caches that, while nothing changes. Bounded as a long job's
        statement (NEO4J_JOB_TIMEOUT_SECONDS), not a request's: it runs before the process
        serves, and planning every shape on a Neo4j that has just started, on a busy host,
        can take longer than one request may. Run again when it meets another process's
        start-up (its schema statements, its own rehearsal): nothing was kept to undo."""

        async def attempt() -> T:
            async with self._session() as session:
                tx = await session.begin_transaction(timeout=self._seconds(True))
                try:
                    return await work(_runner(tx))
                finally:
                    await tx.rollback()

        with self._bounded(True):
            return await at_start_up(attempt)

    async def write_auto_commit(
        self, name: str, params: Mapping[str, Any], *, job: bool = False
    ) -> None:
        """A write that manages its own transactions (``CALL { } IN TRANSACTIONS``), which
        only an auto-commit transaction may run."""
        with self._bounded(job):
            async with self._session() as session:
                await (await session.run(self._query(query(name), job), params)).consume()

    async def stream(
        self, name: str, params: Mapping[str, Any], *, job: bool = False
    ) -> AsyncIterator[neo4j.Record]:
        """Records of one long read, as they come (one transaction, where writes go)."""
        with self._bounded(job):
            async with self.driver.session(
                database=self.database, default_access_mode=neo4j.WRITE_ACCESS
            ) as session:
                result = await session.run(self._query(query(name), job), params)
                async for record in result:
                    yield record

    async def verify(self) -> None:
        """The database answers a statement (Bolt answering is not enough: a database that is
        starting, or recovering after a crash, refuses transactions for a while)."""
        await self.read("schema/ping", {})

    async def apply_schema(self) -> None:
        """The schema (idempotent: at every start-up); then, once per database, the ends' ids
        on edges and memberships written before they carried them (``schema/follow_ends``,
        ``schema/member_ends``); then every index online, as the list queries name theirs. A
        long job's statements.

        Processes that start together (an API and its workers) all do this at once: each
        statement that fails on another's doing the same (``raced``) runs again, and finds
        the rule created, or the edges given their ids, by the other."""
        for statement in statements("schema/schema"):
            with self._bounded(True):
                await at_start_up(partial(self._run_schema, statement))
        for ends, what in (("follow_ends", "follow edge"), ("member_ends", "list membership")):
            (row,) = await self.read(f"schema/{ends}_done", {}, fresh=True, job=True)
            if not row["done"]:
                log.info("giving every %s its ends' ids (once per database)", what)
                await at_start_up(partial(self.write_auto_commit, f"schema/{ends}", {}, job=True))
                await self.write(f"schema/{ends}_mark", {}, job=True)
        await self.await_indexes()

    async def _run_schema(self, statement: str) -> None:
        await self.driver.execute_query(
            self._query(statement, True), database_=self.database, bookmark_manager_=None
        )

    async def await_indexes(self) -> None:
        await self.read("schema/await_indexes", {}, job=True)
