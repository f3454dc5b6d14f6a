"""Account moves on the real servers: a move needs the target's alias, moves every follower to
the target with its follow's options (a request when the target is locked), leaves those the
target's rules refuse, resumes after its worker stops, puts a severance notice on the change
feed, and waits out its cooldown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from graphsvc.bootstrap import Services
from graphsvc.builders.moves import build_move_jobs
from graphsvc.client import AsyncGraphClient
from graphsvc.concurrency.jobs import Progress
from graphsvc.domain.follow_options import OptionEdits
from graphsvc.settings import Settings
from tests.support.driver import Driver, eventually, refused
from tests.support.events import events_after
from tests.support.helpers import server_env, start_api, start_worker, stop_process

Uid = Callable[[str], str]


async def test_a_move_takes_every_follower_with_its_options(driver: Driver, uid: Uid) -> None:
    old, new, bell, picky, plain, blocked = (
        uid(n) for n in ("old", "new", "bell", "picky", "plain", "blocked")
    )
    await driver.follow(bell, old, notify=True)
    await driver.follow(picky, old, reblogs=False, languages=["fr"])
    await driver.follow(plain, old)
    await driver.follow(blocked, old)
    await driver.block(new, blocked)
    await driver.follow(new, old)  # the new account follows the old one: it stays so
    await refused(driver.move(old, new), 409, "move_refused")  # no alias yet

    assert (await driver.add_alias(new, old)).created
    service = driver.services
    start = await service.core.redis.stream.last_id()
    moved = await driver.move(old, new)
    assert driver.last_status == 202 and moved.moved_to == new
    await driver.settle()

    state = await driver.move_state(old)
    assert (state.state, state.followers_moved) == ("done", 3)
    assert sorted(await driver.ids(new, "followers")) == sorted([bell, picky, plain])
    assert sorted(await driver.ids(old, "followers")) == sorted([blocked, new])
    relation = await driver.relation(picky, new)
    assert (relation.notifying, relation.showing_reblogs, relation.languages) == (
        False,
        False,
        ["fr"],
    )
    assert (await driver.relation(bell, new)).notifying
    events = await events_after(service, start, {old})
    severed = [e for e in events if e["type"] == "severed"]
    assert [(e["dst"], e["cause"], int(e["followers"])) for e in severed] == [(old, "move", 3)]
    assert {e["src"] for e in events if e.get("cause") == "moved"} == {bell, picky, plain}

    again = await driver.move(old, new)  # the move in effect: nothing changes
    assert driver.last_status == 200 and not again.created
    other = uid("other")
    await driver.add_alias(other, old)
    error = await refused(driver.move(old, other), 409, "move_refused")
    assert "MOVE_COOLDOWN_DAYS" in error.message


async def test_a_locked_target_gets_requests(driver: Driver, uid: Uid) -> None:
    old, new, fan = uid("old"), uid("new"), uid("fan")
    await driver.follow(fan, old, notify=True)
    await driver.set_privacy(new, locked=True)
    await driver.add_alias(new, old)
    await driver.move(old, new)
    await driver.settle()
    relation = await driver.relation(fan, new)
    assert (relation.requested, relation.following, relation.notifying) == (True, False, True)
    assert not (await driver.relation(fan, old)).following


class StoppedAfterItsFirstBatch(Progress):
    """A worker cancelled once its first batch is done: at that point, whatever the pace of
    the machine (a cancel from outside may come only after the last batch)."""

    def add(self, what: str, n: int) -> None:
        super().add(what, n)
        raise asyncio.CancelledError


async def test_a_move_stopped_midway_resumes_and_loses_nobody(
    make_service: Callable[..., Services], uid: Uid
) -> None:
    service = make_service(move_batch=2)
    old, new = uid("old"), uid("new")
    fans = [uid("fan") for _ in range(9)]
    for fan in fans:
        await service.relations.follow(fan, old, edits=OptionEdits(notify=True))
    await service.moves.alias(new, old)
    jobs = service.core.neo4j.moves  # the move's mark is made, its job run by hand below
    assert (await jobs.begin(old, new, 0)).started
    mover = build_move_jobs(service.core)
    with pytest.raises(asyncio.CancelledError):  # the worker stops mid-move
        await mover.run(old, StoppedAfterItsFirstBatch())
    assert (await jobs.state(old)).moved >= 2
    assert (await jobs.state(old)).moving
    await mover.run(old, Progress())  # another worker claims it
    state = await jobs.state(old)
    assert (state.moving, state.moved) == (False, 9)
    for fan in fans:
        relation = await service.relations.relationships(fan, [new, old])
        assert [r.following for r in relation] == [True, False]
        assert relation[0].options is not None and relation[0].options.notify


@pytest.mark.faults
async def test_a_move_whose_worker_is_killed_is_finished_by_another(
    make_service: Callable[..., Services],
    uid: Uid,
    server_settings: Settings,
    service_key: str,
) -> None:
    """The API marks the move; a worker process runs it, is killed mid-walk (SIGKILL: its
    lease stops being renewed), and a second worker takes it over: every follower follows the
    new account with its options, none the old one, none twice."""
    service = make_service()
    old, new = uid("old"), uid("new")
    fans = [uid("fan") for _ in range(300)]
    for n, fan in enumerate(fans):
        await service.relations.follow(fan, old, edits=OptionEdits(notify=n % 2 == 0))
    env = {"MOVE_BATCH": "1", "WORKER_LEASE_SECONDS": "1", "WORKER_POLL_SECONDS": "0.1"}
    process, url = start_api(server_settings, **env)
    try:
        async with AsyncGraphClient(url, api_key=service_key) as graph:
            await graph.add_alias(new, old)
            assert (await graph.move(old, new)).state == "moving"
            first = start_worker(server_env(server_settings, **env))
            try:
                for _ in range(6_000):  # kill it as soon as the move has made some steps
                    if (await graph.move_state(old)).followers_moved >= 20:
                        break
                    await asyncio.sleep(0.005)
            finally:
                first.kill()
                first.wait(timeout=30)
            halfway = await graph.move_state(old)
            assert halfway.state == "moving" and 0 < halfway.followers_moved < len(fans)
            second = start_worker(server_env(server_settings, **env))
            try:

                async def done() -> bool:
                    return (await graph.move_state(old)).state == "done"

                await eventually(done, seconds=120)
            finally:
                stop_process(second)
    finally:
        process.terminate()
        process.wait(timeout=30)
    for n, fan in enumerate(fans):
        relation = await service.relations.relationships(fan, [new, old])
        assert [r.following for r in relation] == [True, False], fan
        assert relation[0].options is not None and relation[0].options.notify == (n % 2 == 0)
    counts = await service.core.follow_pages.counts(new)
    assert counts.followers == len(fans)
