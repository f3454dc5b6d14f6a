"""The ranker's self-training on the real servers: the worker's round trains a model on a
graph loaded into Neo4j and promotes it, a running API serves it within its refresh; a worse
model (negated weights) is stored as rejected and never served; a training whose fit raises
leaves the served model and notes the failure; a training waits for a graph load to end (an
error Neo4j says may pass, met while one runs, puts it off), and out of a load such an error is
retried, then noted as a failure if it stays; an A/B split ranks two users with the two
versions; a promoted model goes on trial, and is rolled back or served to everyone by what
its users follow."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from neo4j.exceptions import TransientError

from graphsvc.adapters.neo4j.ranker_models import NewModel
from graphsvc.bootstrap import Services
from graphsvc.domain.ranker.registry import takes_challenger
from graphsvc.domain.ranker.scoring import DEFAULT, Ranker
from graphsvc.ops.ranker import registry as ranker_registry
from graphsvc.workers.graph_loads import loading
from graphsvc.workers.ranker.examples import SINGLE, Example
from graphsvc.workers.ranker.fit import fit
from graphsvc.workers.ranker.training import TrainingPostponed
from tests.support.driver import Driver
from tests.support.ranker import T0, TRAIN_USERS, generated_follows, load, newest_holdout_of
from tests.support.run import RUN
from tests.support.served import cypher

pytestmark = pytest.mark.long  # minutes: handed out first on a parallel run

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
MakeService = Callable[..., Services]


@pytest.fixture
async def graph(
    backends: Services, uid: UserIds, remember: Callable[[list[str]], None]
) -> list[dict[str, Any]]:
    """The same graph, in the same id order, whichever tests ran before: ids share one prefix
    and differ by a fixed-width number (the sample, the validation split and the ranking's
    ties all follow id order, so a run's counter must not reorder them)."""
    base = uid("r")
    users = [f"{base}{n:04d}" for n in range(TRAIN_USERS)]
    remember(users)
    made = with_follow_backs(generated_follows(users, seed=5), seed=5)
    rows = [{"s": s, "d": d, "t": T0 + n * 1_000_000} for n, (s, d) in enumerate(made)]
    assert await load(backends, users, rows) == len(rows)
    return rows


def with_follow_backs(made: list[tuple[str, str]], seed: int) -> list[tuple[str, str]]:
    """The graph's newest edges made follow-backs: a signal the built-in default underweighs
    and a fit finds, so a trained model beats the default whatever the split draws."""
    rng = random.Random(seed)
    kept = made[: len(made) * 9 // 10]
    edges = set(kept)
    backs = sorted({(b, a) for a, b in kept if (b, a) not in edges})
    return kept + rng.sample(backs, min(len(backs), len(made) - len(kept)))


def negated(examples: Sequence[Example], seed: int) -> Ranker:
    """A deliberately bad model: the real fit with every weight turned around."""
    good = fit(examples, seed)
    return dataclasses.replace(good, weights={k: -w for k, w in good.weights.items()})


def broken(examples: Sequence[Example], seed: int) -> Ranker:
    raise RuntimeError("the fit broke")


async def test_a_better_model_is_promoted_a_worse_one_rejected_and_a_crash_changes_nothing(
    make_driver: MakeDriver,
    make_service: MakeService,
    uid: UserIds,
    graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = uid("model")
    settings = {"ranker_model_name": name, "ranker_refresh_seconds": 0.1}
    async with make_driver(**settings) as driver:
        source = driver.services.suggestions.ranker
        assert await source.ranker() == DEFAULT
        # the worker's round runs paced (one user at a time, waiting half the time)
        paced = {"ranker_train_users": 200, "ranker_train_min_edges": 1, "ranker_train_share": 0.5}
        trainer = make_service(**settings, **paced)
        newest_holdout_of(trainer, graph, monkeypatch)
        training, models = trainer.background.ranker_training, trainer.core.neo4j.ranker_models

        # the worker's round: nothing served yet, so a training is due; it beats the default
        assert await training.due() == "no model is served yet"
        await training.round()
        state = await models.state(name)
        assert state.serving.served == 1 and state.attempt_outcome == "promoted"
        assert await training.due() is None  # trained just now, on this graph
        await asyncio.sleep(0.3)  # > RANKER_REFRESH_SECONDS
        served = await source.ranker()
        assert served.version == 1 and served.trained["holdout"] == "newest"
        me = graph[0]["s"]
        assert (await source.ranker_for(me)).version == 1

        # a worse model: validated, stored as rejected with why, never served
        report = await training.train("test", fit=negated)
        assert (report.version, report.promote, report.promoted) == (2, False, False)
        assert report.validation["model"] < report.validation["served v1"]
        assert (await models.serving(name)).served == 1
        recent = {m.version: m for m in await models.recent(name, 10)}
        assert (recent[1].status, recent[2].status) == ("served", "rejected")
        assert "is not above" in recent[2].why
        assert json.loads(recent[2].metrics or "{}")["compared_with"] == 1

        # a crashed training: the error is noted, nothing else changes
        with pytest.raises(RuntimeError, match="the fit broke"):
            await training.train("test", fit=broken)
        state = await models.state(name)
        assert state.serving.served == 1
        assert (state.attempt_outcome, state.attempt_why) == (
            "failed",
            "RuntimeError: the fit broke",
        )
        assert [m.version for m in await models.recent(name, 10)] == [2, 1]
        await asyncio.sleep(0.3)
        assert (await source.ranker()).version == 1
        lines = await ranker_registry.status_lines(trainer)
        assert any(line.startswith("served: v1, promoted") for line in lines)
        assert any("last training:" in line and "failed" in line for line in lines)


async def shown_and_followed(driver: Driver, users: Sequence[str], follow: bool) -> None:
    """Each user asks for five suggestions, is shown them and, if ``follow``, follows the
    first: what the service counts online, for the version that ranked each list."""
    for user in users:
        answer = await driver.suggestions(user, limit=5)
        ids, rid = [item.user_id for item in answer.items], answer.recommendation_id
        assert (await driver.record_impressions(user, ids, recommendation_id=rid)).recorded
        if follow:
            assert (await driver.follow(user, ids[0], recommendation_id=rid)).created


def arms(users: Sequence[str], version: int, share: float) -> tuple[list[str], list[str]]:
    """(the challenger's users, the served model's) of a trial of ``version``, eight each."""
    challenged = [u for u in users if takes_challenger(u, version, share)]
    return challenged[:8], [u for u in users if u not in challenged][:8]


async def test_a_promoted_model_is_tried_then_rolled_back_or_served_by_what_users_follow(
    make_driver: MakeDriver,
    make_service: MakeService,
    uid: UserIds,
    graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = uid("model")
    settings: dict[str, Any] = {"ranker_model_name": name, "ranker_refresh_seconds": 0.1}
    settings |= {
        "ranker_trial_share": 0.5,
        "ranker_trial_min_shown": 20,
        "ranker_trial_seconds": 3600,
    }
    users = sorted({row["s"] for row in graph})
    async with make_driver(**settings) as driver:
        fast = {"ranker_train_users": 200, "ranker_train_min_edges": 1, "ranker_train_share": 1.0}
        trainer = make_service(**settings, **fast)
        newest_holdout_of(trainer, graph, monkeypatch)
        training, models = trainer.background.ranker_training, trainer.core.neo4j.ranker_models

        # the worker's round promotes its model onto a trial: half the users, no training due
        await training.round()
        state = await models.state(name)
        assert (state.serving.served, state.serving.challenger, state.serving.share) == (0, 1, 0.5)
        assert state.attempt_outcome == "on trial" and state.trial_at is not None
        assert await training.due() is None
        lines = await ranker_registry.status_lines(trainer)
        assert any(line.startswith("on trial: v1 for 50% of users") for line in lines), lines
        assert "next training: once the trial of v1 ends" in lines

        # its users are shown as much and follow nothing; the default's follow: rolled back
        await asyncio.sleep(0.3)  # > RANKER_REFRESH_SECONDS
        tried, kept = arms(users, 1, 0.5)
        await shown_and_followed(driver, tried, follow=False)
        await shown_and_followed(driver, kept, follow=True)
        await training.round()
        state = await models.state(name)
        assert (state.serving.served, state.serving.challenger) == (0, 0)
        assert state.attempt_outcome == "rolled back" and state.trial_at is None
        (model,) = await models.recent(name, 5)
        assert model.status == "rejected" and model.why.startswith("rolled back on its trial")
        assert "the built-in default's 0.2000 (8 follows of 40 shown)" in model.why
        await asyncio.sleep(0.3)
        assert (await driver.services.suggestions.ranker.ranker_for(tried[0])).version == 0
        assert await training.due() is None  # not fitted again at once on the same graph

        # the next model's users follow, the default's do not: served to everyone
        assert (await training.train("asked")).version == 2
        await asyncio.sleep(0.3)
        tried, kept = arms(users[len(users) // 2 :], 2, 0.5)  # users not asked before
        await shown_and_followed(driver, tried, follow=True)
        await shown_and_followed(driver, kept, follow=False)
        await training.round()
        state = await models.state(name)
        assert (state.serving.served, state.serving.challenger) == (2, 0)
        assert state.attempt_outcome == "promoted"
        assert state.served_why is not None and state.served_why.startswith("won its trial")
        # the default's counts before this trial (the first one's) are not this trial's
        assert "the built-in default's 0.0000 (0 follows of 40 shown)" in state.served_why
        await asyncio.sleep(0.3)
        assert (await driver.services.suggestions.ranker.ranker()).version == 2


async def test_when_no_fit_beats_the_textbook_the_textbook_is_served(
    make_driver: MakeDriver,
    make_service: MakeService,
    uid: UserIds,
    graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing trained is served (the built-in default) and the fit is a bad one: the model
    is stored rejected and the best heuristic is promoted as a ranker of its own, served by
    the API and named by `graphsvc ranker status`."""
    name = uid("model")
    settings = {"ranker_model_name": name, "ranker_refresh_seconds": 0.1}
    async with make_driver(**settings) as driver:
        fast = {"ranker_train_users": 200, "ranker_train_min_edges": 1, "ranker_train_share": 1.0}
        trainer = make_service(**settings, **fast)
        newest_holdout_of(trainer, graph, monkeypatch)
        report = await trainer.background.ranker_training.train("test", fit=negated)
        assert report.heuristic is not None and report.promoted
        best = max(SINGLE, key=lambda h: report.validation[h])
        assert report.heuristic.trained["heuristic"] == best
        assert f"{best} ({report.validation[best]:.4f}) is served instead" in report.why
        recent = {m.version: m for m in await trainer.core.neo4j.ranker_models.recent(name, 10)}
        assert (recent[1].status, recent[2].status) == ("rejected", "served")
        await asyncio.sleep(0.3)
        served = await driver.services.suggestions.ranker.ranker()
        assert served.version == 2 and served.weights == {SINGLE[best]: 1.0}
        lines = await ranker_registry.status_lines(trainer)
        assert any(f"({best}: no fitted model beat it)" in line for line in lines)


def outdated(examples: Sequence[Example], seed: int) -> Ranker:
    """The error Neo4j gives a transaction that an index build made outdated (as a bulk
    import's does), met in the middle of a cycle."""
    raise TransientError("Transaction has seen state which has been invalidated")


def outdated_once() -> Callable[[Sequence[Example], int], Ranker]:
    """A fit that meets Neo4j's passing error the first time only, then fits."""
    calls = []

    def fitted(examples: Sequence[Example], seed: int) -> Ranker:
        calls.append(seed)
        return outdated(examples, seed) if len(calls) == 1 else fit(examples, seed)

    return fitted


async def test_a_training_waits_for_a_load_and_retries_what_may_pass(
    make_service: MakeService,
    uid: UserIds,
    graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = uid("model")
    # a Redis prefix of its own: the load's mark must not hold off other tests' workers
    trainer = make_service(
        ranker_model_name=name,
        ranker_train_users=200,
        ranker_train_min_edges=1,
        redis_prefix=f"tl{RUN}:",
    )
    newest_holdout_of(trainer, graph, monkeypatch)
    training, models = trainer.background.ranker_training, trainer.core.neo4j.ranker_models
    caplog.set_level(logging.INFO, logger="graphsvc.workers.ranker.training")
    caplog.set_level(logging.INFO, logger="graphsvc.concurrency.retries")

    async with loading(trainer.core.redis.leases):
        assert await training.due() == "no model is served yet"
        await training.round()  # put off: nothing stored, no failure noted
        state = await models.state(name)
        assert (state.serving.served, state.attempt_outcome) == (0, None)
        assert any(
            r.getMessage() == "ranker training put off: a graph load is running"
            for r in caplog.records
        )
        # Neo4j's error that may pass, met mid-cycle while a load runs: put off, still due
        with pytest.raises(TrainingPostponed, match="TransientError"):
            await training.train("test", fit=outdated)
        state = await models.state(name)
        assert (state.serving.served, state.attempt_outcome) == (0, None)
    assert await training.due() == "no model is served yet"

    # the load ended: the same error once is retried, and the training goes through
    report = await training.train("test", fit=outdated_once())
    assert report.promoted
    assert any("ranker training: attempt 1 failed" in r.getMessage() for r in caplog.records)
    # an error that does not pass is a failure noted with its reason, not a silence
    with pytest.raises(TransientError):
        await training.train("test", fit=outdated)
    state = await models.state(name)
    assert state.attempt_outcome == "failed" and "TransientError" in (state.attempt_why or "")


async def stored(services: Services, name: str, weights: dict[str, float]) -> int:
    """A model stored as a rejected one (not promoted), its version."""
    body = dataclasses.replace(Ranker(weights=weights), trained={"edges": 0}).as_json()
    new = NewModel(json.dumps(body), "{}", T0, 0, promote=False, expected=0, why="made by a test")
    version, promoted = await services.core.neo4j.ranker_models.save(name, new)
    assert not promoted
    return version


async def test_an_operator_ending_a_trial_leaves_the_tried_model_rejected(
    make_service: MakeService, uid: UserIds
) -> None:
    """A model never served, on trial until an operator's split or ``--off`` ended it, goes
    back to rejected, as a rejected challenger does, not to retired."""
    name = uid("model")
    services = make_service(ranker_model_name=name)
    models = services.core.neo4j.ranker_models
    body = json.dumps(dataclasses.replace(DEFAULT, version=0).as_json())
    for ended_by in ("split", "off"):
        tried = NewModel(body, "{}", T0, 0, promote=True, expected=0, why="test", trial=0.5)
        version, promoted = await models.save(name, tried)
        state = await models.state(name)
        assert promoted and (state.serving.challenger, state.trial_at) == (version, T0)
        if ended_by == "split":
            other = await stored(services, name, {"paths": 1.0})
            assert "ranks 10% of users" in await ranker_registry.split(services, other, 0.1)
            assert (await models.state(name)).trial_at is None  # an operator's split now
        else:
            assert f"challenger was v{version}" in await ranker_registry.split_off(services)
        statuses = {m.version: m.status for m in await models.recent(name, 5)}
        assert statuses[version] == "rejected", statuses
    assert (await models.state(name)).serving.served == 0


async def test_a_split_ranks_two_users_with_the_two_versions(
    make_service: MakeService, uid: UserIds
) -> None:
    name = uid("model")
    services = make_service(ranker_model_name=name, ranker_refresh_seconds=0.01)
    first = await stored(services, name, {"ra": 1.0})
    second = await stored(services, name, {"paths": 1.0})
    assert "v1 is served" in await ranker_registry.promote(services, first)
    assert "ranks 50% of users" in await ranker_registry.split(services, second, 0.5)
    users = [uid(f"s{n}") for n in range(20)]
    challenged = next(u for u in users if takes_challenger(u, second, 0.5))
    kept = next(u for u in users if not takes_challenger(u, second, 0.5))
    source = services.suggestions.ranker
    await source.refresh()
    assert (await source.ranker_for(challenged)).version == second
    assert (await source.ranker_for(kept)).version == first
    assert (await source.ranker()).version == first
    statuses = {
        m.version: m.status for m in await services.core.neo4j.ranker_models.recent(name, 5)
    }
    assert statuses == {first: "served", second: "challenger"}

    with pytest.raises(ranker_registry.RegistryRefused, match="is the served model"):
        await ranker_registry.split(services, first, 0.5)
    assert "challenger was v2" in await ranker_registry.split_off(services)
    await asyncio.sleep(0.02)
    assert (await source.ranker_for(challenged)).version == first
    statuses = {
        m.version: m.status for m in await services.core.neo4j.ranker_models.recent(name, 5)
    }
    assert statuses == {first: "served", second: "rejected"}  # never served: back to rejected


async def test_a_registry_made_anew_serves_its_own_first_version(
    make_driver: MakeDriver,
    make_service: MakeService,
    uid: UserIds,
    graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registry emptied (as an evaluation's wipe leaves it) numbers its models from 1 again:
    an API process that served the old v1 serves the new one, not the old weights it holds."""
    name = uid("model")
    settings = {"ranker_model_name": name, "ranker_refresh_seconds": 0.1}
    async with make_driver(**settings) as driver:
        fast = {"ranker_train_users": 200, "ranker_train_min_edges": 1, "ranker_train_share": 1.0}
        trainer = make_service(**settings, **fast)
        newest_holdout_of(trainer, graph, monkeypatch)
        training, source = trainer.background.ranker_training, driver.services.suggestions.ranker
        first = await training.train("test", force=True)
        await asyncio.sleep(0.3)  # > RANKER_REFRESH_SECONDS
        assert (await source.ranker()).weights == first.weights and first.version == 1
        cypher(
            trainer.settings,
            "MATCH (n) WHERE (n:RankerModel OR n:RankerServing) AND n.name = $name DETACH DELETE n",
            name=name,
        )
        second = await training.train("test", fit=negated, force=True)
        assert second.version == 1 and second.weights != first.weights
        await asyncio.sleep(0.3)
        assert (await source.ranker()).weights == second.weights
