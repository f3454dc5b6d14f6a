"""Relationships between busy users, over the real servers: a viewer and others with hundreds
of relationships each (Neo4j keeps such nodes' relationships grouped by type and direction,
another storage path than the few-relationship users of test_queries), with blocks both ways
and a celebrity on either side of the question; and what a read costs a popular account with
thousands of blocks both ways (PROFILE's db hits, never times)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.errors import InvalidUserId
from graphsvc.domain.ids import validate_user_ids
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load_edges
from graphsvc.wire.ids import is_user_id, quoted
from tests.support.driver import Driver, relationship
from tests.support.stores import db_hits

UserIds = Callable[[str], str]
BUSY = 3_000  # blockers of the popular account, and users it blocks


async def _blocks(services: Services, pairs: list[tuple[str, str]]) -> None:
    """Each (blocker, blocked) pair blocks, a thousand sent at a time (batches of them share
    transactions, as live writes do)."""
    for start in range(0, len(pairs), 1_000):
        chunk = pairs[start : start + 1_000]
        await asyncio.gather(*(services.relations.block(a, b) for a, b in chunk))


async def test_relationships_of_busy_users(
    make_driver: Callable[..., Driver],
    make_service: Callable[..., Services],
    tmp_path: Path,
    remember: Callable[[list[str]], None],
    uid: UserIds,
) -> None:
    prefix = uid("rb") + "."
    lines = [f"v f{n:03d} {1_700_000_000 + n}\n" for n in range(300)]  # v follows 300
    lines += [f"fan{n:04d} v 1700000000\n" for n in range(400)]  # 400 follow v
    lines += [f"f{n:03d} v 1700000000\n" for n in range(0, 300, 3)]  # every 3rd follows back
    lines += [f"fan{n:04d} star 1700000000\n" for n in range(2_000)]  # a celebrity
    lines += ["v star 1700000000\n", "star v 1700000000\n"]
    lines += [f"stranger{n} f{n:03d} 1700000000\n" for n in range(100)]
    path = tmp_path / "busy.txt"
    path.write_text("".join(lines))
    edges = read_edge_file(path, prefix=prefix)
    remember(edges.users)
    await load_edges(make_service(), edges, progress=False)
    p = prefix.__add__
    async with make_driver() as graph:
        for blocked in ("f299", "fan0399"):  # v blocks a followed user and a fan
            await graph.block(p("v"), p(blocked))
        await graph.block(p("f298"), p("v"))

        asked = ["f000", "f001", "f298", "f299", "fan0000", "fan0399", "star", "stranger5"]
        answer = await graph.relationships(p("v"), [p(a) for a in [*asked, "ghost"]])
        rel = answer.relationships
        assert rel[p("f000")] == relationship(following=True, followed_by=True)
        assert rel[p("f000")].mutual
        assert rel[p("f001")] == relationship(following=True)
        assert rel[p("f298")] == relationship(blocked_by=True)  # unfollowed
        assert rel[p("f299")] == relationship(blocking=True)
        assert rel[p("fan0000")] == relationship(followed_by=True)
        assert rel[p("fan0399")] == relationship(blocking=True)
        assert rel[p("star")] == relationship(following=True, followed_by=True)
        assert rel[p("stranger5")] == rel[p("ghost")] == relationship()

        # the celebrity as the viewer: its 2,000 followers are never the side walked
        answer = await graph.relationships(p("star"), [p("v"), p("fan0001"), p("f001")])
        star = answer.relationships
        assert star[p("v")] == relationship(following=True, followed_by=True)
        assert star[p("fan0001")] == relationship(followed_by=True)
        assert star[p("f001")] == relationship()

        # the other way round: each side sees the block from its own end
        assert await graph.relation(p("f299"), p("v")) == relationship(blocked_by=True)


async def test_relationships_cost_what_the_ids_asked_cost_however_many_blocks(
    driver: Driver, backends: Services, uid: UserIds
) -> None:
    """A popular account blocked by thousands, and blocking thousands itself, pays for the 100
    ids it asks about, never for its blocks: each id is tested for a block either way as an
    edge between two known nodes."""
    me = uid("popular")
    asked = [uid(f"asked{n}") for n in range(100)]
    await driver.follow_pairs(*((me, a) for a in asked[:30]), *((a, me) for a in asked[30:60]))
    await driver.follow_pairs(*((a, uid("other")) for a in asked[60:98]))
    await driver.block(asked[98], me)
    await driver.block(me, asked[99])
    params = {"id": me, "ids": asked}
    quiet = await db_hits(backends, "relations/relationships", params)
    before = await driver.relationships(me, asked)

    await _blocks(backends, [(uid(f"blocker{n}"), me) for n in range(BUSY)])
    await _blocks(backends, [(me, uid(f"blocked{n}")) for n in range(BUSY)])
    busy = await db_hits(backends, "relations/relationships", params)
    assert await driver.relationships(me, asked) == before
    assert before.relationships[asked[98]] == relationship(blocked_by=True)
    assert before.relationships[asked[99]] == relationship(blocking=True)
    assert busy <= 2 * quiet, (quiet, busy)


@pytest.mark.parametrize(
    "ids",
    [
        ["a", ""],
        ["a", "x" * 65],
        ["a", "b c"],
        ["a,b"],
        ["a", ",b"],
        [""],
        ["ok", "x{y}"],
        ["a", ".."],
    ],
)
def test_a_list_of_ids_is_checked_as_each_id_would_be(ids: list[str]) -> None:
    bad = next(i for i in ids if not is_user_id(i))
    with pytest.raises(InvalidUserId, match=re.escape(quoted(bad))):
        validate_user_ids(ids, "ids item")


def test_a_list_of_valid_ids_passes() -> None:
    validate_user_ids(["a", "b.c", "x" * 64, "A-9_"], "ids item")
