"""The benchmark's relational baseline answers what the service answers, on the same edges.

A PostgreSQL server of the bench's own kind (``bench.postgres``) on a test port and folder, a
database of this run's own, and a generated graph (ids unique to the run) loaded both there and
into the test Neo4j and Redis: counts, pages and a follow must agree, or the benchmark would
compare two different questions.
"""

from __future__ import annotations

import collections
import os
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest

from bench import postgres
from graphsvc.bootstrap import Services
from graphsvc.domain.model import Entry
from graphsvc.ops.data.edge_files import Edges
from graphsvc.ops.data.generate import generate
from graphsvc.ops.data.loader import load_edges
from graphsvc.settings import PROJECT_ROOT
from tests.support.run import RUN

PREFIX = f"t{RUN}.pg."
SETTINGS = postgres.PostgresSettings(
    home=PROJECT_ROOT / ".local" / "test-postgres",
    port=int(os.environ.get("TEST_POSTGRES_PORT", "15432")),
    database=f"t{RUN}",
    shared_buffers="128MB",
)
TIE = 1_700_000_000_000_000


@pytest.fixture(scope="module")
def server() -> Iterator[postgres.LocalPostgres]:
    """Started once and left running for the next run, as the test Neo4j and Redis are."""
    local = postgres.LocalPostgres(SETTINGS)
    try:
        local.up(print)
    except postgres.PostgresError as exc:
        if postgres.installed():  # installed but broken: a failure, not a skip
            raise
        pytest.skip(f"PostgreSQL is missing and cannot be installed here: {exc}")
    yield local


@pytest.fixture(scope="module")
async def pg(server: postgres.LocalPostgres) -> AsyncIterator[asyncpg.Connection]:
    await server.ensure_database()
    conn = await asyncpg.connect(SETTINGS.dsn())
    yield conn
    await conn.close()
    admin = await asyncpg.connect(SETTINGS.dsn("postgres"))
    await admin.execute(f'DROP DATABASE "{SETTINGS.database}" WITH (FORCE)')
    await admin.close()


@pytest.fixture(scope="module")
def graph() -> Edges:
    """A small generated graph with two celebrities; a dozen followers of the most followed
    user share one follow time, so the tie order (follower id, descending) is exercised too."""
    rows = list(generate(300, 4_000, seed=11, celebrities=2))
    top = collections.Counter(dst for _, dst, _ in rows).most_common(1)[0][0]
    tied = sorted(src for src, dst, _ in rows if dst == top)[:12]
    return Edges.from_rows(
        (
            f"{PREFIX}{src}",
            f"{PREFIX}{dst}",
            TIE if dst == top and src in tied else seconds * 1_000_000,
        )
        for src, dst, seconds in rows
    )


@pytest.fixture(scope="module")
async def loaded(
    pg: asyncpg.Connection, backends: Services, graph: Edges, touched: set[str]
) -> Edges:
    rows = [(src, dst, since) for (src, dst), since in graph.edges.items()]
    await postgres.load(pg, "test", rows, len(rows), progress=False)
    await load_edges(backends, graph, progress=False)
    touched.update(graph.users)  # the module ends by checking their mirrors against Neo4j
    return graph


def chosen_users(graph: Edges) -> list[str]:
    followers = collections.Counter(dst for _, dst in graph.edges)
    following = collections.Counter(src for src, _ in graph.edges)
    ranked = [user for user, _ in followers.most_common()]
    return [
        *ranked[:3],  # the most followed, with their tie
        ranked[len(ranked) // 2],  # a median one
        ranked[-1],  # one follower only
        following.most_common(1)[0][0],  # the one who follows the most
        f"{PREFIX}nobody",  # unknown to both
    ]


async def service_walk(
    fetch: Callable[..., object], user: str, limit: int = 20
) -> list[tuple[str, int]]:
    items: list[Entry] = []
    cursor = None
    while True:
        page = await fetch(user, limit, cursor)  # type: ignore[misc]
        items += page.items
        cursor = page.next_cursor
        if cursor is None:
            return [(e.user_id, e.since) for e in items]


async def pg_walk(
    pg: asyncpg.Connection, user: str, *, followers: bool, limit: int = 20
) -> list[tuple[str, int]]:
    items: list[tuple[str, int]] = []
    after = postgres.NEWEST
    while rows := await postgres.page(pg, user, limit, after, followers=followers):
        items += rows
        after = (rows[-1][1], rows[-1][0])
    return items


async def test_counts_agree(pg: asyncpg.Connection, backends: Services, loaded: Edges) -> None:
    for user in chosen_users(loaded):
        truth = await backends.follow_pages.counts(user)
        assert await postgres.counts(pg, user) == (truth.followers, truth.following), user
        assert await postgres.follower_count(pg, user) == truth.followers, user


async def test_pages_agree_newest_first(
    pg: asyncpg.Connection, backends: Services, loaded: Edges
) -> None:
    users = chosen_users(loaded)
    top = users[0]
    ours = await service_walk(backends.follow_pages.followers, top)
    assert len(ours) == (await backends.follow_pages.counts(top)).followers > 20
    assert await pg_walk(pg, top, followers=True) == ours
    tie = [user for user, since in ours if since == TIE]
    assert len(tie) == 12 and tie == sorted(tie, reverse=True)
    for user in users:
        first = await backends.follow_pages.followers(user, 20)
        assert await postgres.page(pg, user, 20) == [(e.user_id, e.since) for e in first.items]
        following = await service_walk(backends.follow_pages.following, user, 7)
        assert await pg_walk(pg, user, followers=False, limit=7) == following, user


async def test_a_follow_moves_the_same_counts(
    pg: asyncpg.Connection, backends: Services, loaded: Edges, touched: set[str]
) -> None:
    top, newcomer = chosen_users(loaded)[0], f"{PREFIX}newcomer"
    touched.add(newcomer)
    since = 1_800_000_000_000_000
    assert (await backends.relations.follow(newcomer, top)).created
    assert await postgres.follow(pg, newcomer, top, since)
    for user in (top, newcomer):
        truth = await backends.follow_pages.counts(user)
        assert await postgres.counts(pg, user) == (truth.followers, truth.following)
        assert await postgres.follower_count(pg, user) == truth.followers
    # again: nothing new, and no counter moves
    assert not (await backends.relations.follow(newcomer, top)).created
    assert not await postgres.follow(pg, newcomer, top, since + 1)
    truth = await backends.follow_pages.counts(top)
    assert await postgres.counts(pg, top) == (truth.followers, truth.following)
    assert (await postgres.page(pg, top, 1))[0] == (newcomer, since)
