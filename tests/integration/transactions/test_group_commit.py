"""Group commit: writes that arrive together share one Neo4j transaction and one Redis round
trip, and still behave one by one (rules per edge, refusals per write, order per user)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from graphsvc.adapters.neo4j.relations import WriteOutcome
from graphsvc.bootstrap import Connections, Services, build
from graphsvc.client import GraphError
from graphsvc.domain.edge_writes import EdgeWrite
from graphsvc.domain.model import CountChange, EdgeChange
from graphsvc.settings import Settings
from graphsvc.wire.schemas import FollowBody
from tests.support.driver import Driver
from tests.support.run import assert_consistent

UserIds = Callable[[str], str]
# Long enough that writes sent together always meet in one batch, even on a loaded machine.
SHIFTS, PAIRS = 40, 12  # the opposite-order test: rounds, and pairs per batch
ONE_BATCH = {"write_batch_window_ms": 100, "write_batch_max": 1_000, "write_batch_concurrency": 1}


def record_batches(services: Services) -> list[tuple[list[EdgeWrite], list[WriteOutcome]]]:
    """Every batch the services commit, with its outcomes (the real commit runs unchanged)."""
    edges = services.core.neo4j.edges
    commit = edges.commit
    seen: list[tuple[list[EdgeWrite], list[WriteOutcome]]] = []

    async def recording(writes: Any) -> list[WriteOutcome]:
        outcomes = await commit(writes)
        seen.append((list(writes), outcomes))
        return outcomes

    edges.commit = recording  # type: ignore[method-assign]
    return seen


async def test_a_refused_follow_in_a_batch_refuses_only_itself(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    star = uid("star")
    fine, limited, blocked, suspended = (uid(n) for n in ("fine", "limited", "blocked", "susp"))
    async with make_driver(max_following=2, **ONE_BATCH) as driver:
        services = driver.services
        await driver.follows(limited, uid("x0"), uid("x1"))  # at the limit of 2
        await driver.block(star, blocked)
        await services.moderation.set_status(suspended, "suspended")
        batches = record_batches(services)
        answers = await asyncio.gather(
            *(driver.follow(who, star) for who in (fine, limited, blocked, suspended)),
            return_exceptions=True,
        )
        assert [len(writes) for writes, _ in batches] == [4]
        assert answers[0] == FollowBody(following=True, created=True)
        codes = [(e.status, e.code) for e in answers[1:] if isinstance(e, GraphError)]
        assert codes == [(409, "following_limit"), (403, "blocked"), (403, "user_suspended")]
        truth = (await services.core.neo4j.snapshots.snapshots([star], followers_limit=10))[star]
        assert [e.user_id for e in truth.followers] == [fine]
        assert (await driver.counts(star)).followers == 1
        await assert_consistent(services, {star, fine, limited, blocked, suspended})


async def test_one_followers_follows_in_one_statement_see_each_other(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    # the rows of one statement share the follower: each row's limit check counts the rows
    # before it, and its ticks follow theirs, as one follow at a time would
    user, targets = uid("many"), [uid(f"t{n}") for n in range(5)]
    async with make_driver(max_following=3, **ONE_BATCH) as driver:
        services = driver.services
        batches = record_batches(services)
        answers = await asyncio.gather(
            *(driver.follow(user, target) for target in targets), return_exceptions=True
        )
        assert [len(writes) for writes, _ in batches] == [5]
        made = [a for a in answers if isinstance(a, FollowBody)]
        refused = [(e.status, e.code) for e in answers if isinstance(e, GraphError)]
        assert len(made) == 3 and refused == [(409, "following_limit")] * 2
        ((_, outcomes),) = batches
        changes = [o for o in outcomes if isinstance(o, EdgeChange)]
        ticks = [c.src_counts.cs for c in changes if isinstance(c.src_counts, CountChange)]
        assert len(ticks) == 3 and ticks == list(range(ticks[0], ticks[0] + 3))
        assert (await driver.counts(user)).following == 3
        await assert_consistent(services, {user, *targets})


async def test_toggles_of_one_pair_in_one_batch_apply_in_arrival_order(
    make_service: Callable[..., Services], backends: Services, uid: UserIds
) -> None:
    services = make_service(**ONE_BATCH)
    relations = services.relations
    for ends_following in (True, False):
        a, b = uid("a"), uid("b")
        await relations.follow(uid("warm"), b)  # b's list is warm: the writes land in it
        batches = record_batches(services)
        steps = [relations.follow, relations.unfollow, relations.follow, relations.unfollow]
        steps += [relations.follow] if ends_following else []
        results = await asyncio.gather(*(step(a, b) for step in steps))
        assert all(results), results  # each one created or removed the edge, in turn
        ((writes, outcomes),) = batches
        assert [w.kind.value for w in writes] == [s.__name__ for s in steps]
        versions = [o.version for o in outcomes if isinstance(o, EdgeChange)]
        assert len(versions) == len(steps) and versions == sorted(set(versions))
        truth = (await backends.core.neo4j.snapshots.snapshots([a], following_limit=10))[a]
        assert [e.user_id for e in truth.following] == ([b] if ends_following else [])
        if ends_following:  # the edge's time is the last follow's version
            assert truth.following[0].since == versions[-1]
        await assert_consistent(backends, {a, b})


def _mixed_writes(
    services: Services, pairs: list[tuple[str, str]], shift: int, *, blocks: bool = True
) -> list[Any]:
    """Follows, unfollows, blocks and unblocks of these pairs, in the order given."""
    relations, calls = services.relations, []
    for n, (a, b) in enumerate(pairs):
        kind = (n + shift) % 5 if blocks else 2 + (n + shift) % 3
        if kind == 0:
            calls.append(relations.block(a, b))
        elif kind == 1:
            calls.append(relations.unblock(a, b))
        elif kind == 2:
            calls.append(relations.unfollow(a, b))
        else:
            calls.append(_follow_unless_blocked(services, a, b))
    return calls


async def test_batches_touching_the_same_users_in_opposite_orders_never_deadlock(
    server_settings: Settings, uid: UserIds
) -> None:
    """Two batches of one process, committing at once, over the same users in opposite
    orders (mutual follows and unfollows): with no retry of a failed transaction, a deadlock
    reported by Neo4j would fail writes here, and none may. The users one batch acts for are
    only followed in the other, so the acting users' locks alone would not keep them apart."""
    settings = server_settings.with_values(
        neo4j_retry_seconds=0,
        write_batch_window_ms=100,
        write_batch_max=PAIRS,
        write_batch_concurrency=2,
    )
    xs, ys = [uid(f"x{n}") for n in range(PAIRS)], [uid(f"y{n}") for n in range(PAIRS)]
    async with Connections.open(settings.neo4j, settings.redis) as connections:
        services = build(settings, connections)
        batches = record_batches(services)
        for shift in range(SHIFTS):
            forward = list(zip(xs, ys, strict=True))  # x_i acts on y_i
            backward = [
                (y, x) for x, y in zip(reversed(xs[1:] + xs[:1]), reversed(ys), strict=True)
            ]
            calls = _mixed_writes(services, forward, shift) + _mixed_writes(
                services, backward, shift
            )
            results = await asyncio.gather(*calls, return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            assert not errors, [str(e)[:300] for e in errors[:2]]
        assert [len(writes) for writes, _ in batches] == [PAIRS] * (2 * SHIFTS)
        await assert_consistent(services, {*xs, *ys})


async def test_batches_of_two_processes_over_the_same_users_all_commit(
    make_service: Callable[..., Services], uid: UserIds
) -> None:
    """Across processes the in-process locks do not reach: Neo4j orders the batches by its
    node locks (taken in id order), and a deadlock it reports is retried by the driver; every
    write ends committed and mirrored."""
    one, two = make_service(**ONE_BATCH), make_service(**ONE_BATCH)
    users = [uid(f"d{n}") for n in range(12)]
    for shift in range(4):
        forward = list(zip(users, users[1:] + users[:1], strict=True))
        backward = [(b, a) for a, b in reversed(forward)]
        results = await asyncio.gather(
            *_mixed_writes(one, forward, shift),
            *_mixed_writes(two, backward, shift),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        assert not errors, [str(e)[:300] for e in errors[:2]]
    await assert_consistent(one, set(users))


async def _follow_unless_blocked(services: Services, a: str, b: str) -> bool:
    from graphsvc.domain.errors import Blocked

    try:
        return await services.relations.follow(a, b)
    except Blocked:
        return False
