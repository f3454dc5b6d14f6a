"""People you may know as a user gets it, end to end: a real graph's file, less a held-out
share, loaded into a fresh database with `graphsvc load` (its lines in their own order, no
times), a `graphsvc worker` left to train by itself, then `GET /suggestions` asked for the
users with held-out follows. Its precision@10 must beat the best of common neighbours,
Adamic-Adar and resource allocation, computed here with networkx on the same training graph,
independently of the package.

The held-out share is of follows, each on its own: on a directed graph a follow whose
follow-back stays in training is a follower not followed back yet, a real suggestion."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

from graphsvc.bootstrap import open_services
from graphsvc.domain.ranker.scoring import FEATURES
from graphsvc.settings import Settings
from graphsvc.workers.ranker.examples import collect
from tests.support.helpers import (
    AppClient,
    ThrowawayRedis,
    cli,
    create_key,
    own_servers,
    start_worker,
    stop_process,
)
from tests.support.paths import DATASETS
from tests.support.ranker import SERVED_WORKER_ENV

EMAIL = DATASETS / "email-Eu-core.txt"
K = 10
USERS = 300
SEED = 1

pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(not EMAIL.exists(), reason="shared/ datasets absent"),
]


def split(path: Path, seed: int) -> tuple[list[tuple[str, str]], dict[str, set[str]]]:
    """(the training lines in file order, each user's held-out follows)."""
    lines = [tuple(line.split()[:2]) for line in path.read_text().splitlines() if line.strip()]
    lines = [(a, b) for a, b in lines if a != b]
    units = sorted(set(lines))
    held_units = set(random.Random(seed).sample(units, len(units) // 10))
    train, held = [], {}
    for a, b in lines:
        if (a, b) in held_units:
            held.setdefault(a, set()).add(b)
        else:
            train.append((a, b))
    return train, held


def heuristics(train: list[tuple[str, str]], users: list[str]) -> dict[str, dict[str, list[str]]]:
    """Each heuristic's top 10 per user: 2-hop candidates on the undirected view, the user and
    whom it follows left out, ties by id, zero scores never suggested."""
    graph = nx.Graph(train)
    follows: dict[str, set[str]] = {}
    for a, b in train:
        follows.setdefault(a, set()).add(b)
    methods = {
        "common neighbours": lambda pairs: (
            (u, v, len(list(nx.common_neighbors(graph, u, v)))) for u, v in pairs
        ),
        "Adamic-Adar": lambda pairs: nx.adamic_adar_index(graph, pairs),
        "resource allocation": lambda pairs: nx.resource_allocation_index(graph, pairs),
    }
    tops: dict[str, dict[str, list[str]]] = {name: {} for name in methods}
    for user in users:
        excluded = {user} | follows.get(user, set())
        near = {c for m in graph[user] for c in graph[m]} - excluded
        pairs = [(user, c) for c in sorted(near)]
        for name, method in methods.items():
            scored = sorted(((-s, v) for _, v, s in method(pairs) if s > 0))
            tops[name][user] = [v for _, v in scored[:K]]
    return tops


def precision(tops: dict[str, list[str]], held: dict[str, set[str]]) -> float:
    return sum(len(set(top[:K]) & held[u]) / K for u, top in tops.items()) / len(tops)


@dataclass
class Served:
    answers: dict[str, list[str]]
    held: dict[str, set[str]]
    train: list[tuple[str, str]]
    settings: Settings
    env: dict[str, str]
    path: Path  # the training graph's file


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The fresh service loaded and trained by its worker: the suggestions of the sampled
    users, their held-out follows, the training lines, and the service's settings."""
    base = tmp_path_factory.mktemp("ranker-as-served")
    redis = ThrowawayRedis(base)
    settings, neo4j, env = own_servers(base, redis.url)
    # the suite keeps workers from training on the shared graph; this one is the test's own
    env |= SERVED_WORKER_ENV
    train, held = split(EMAIL, SEED)
    path = base / "train.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in train))
    worker = None
    try:
        redis.start()
        neo4j.up(print)
        cli(env, "load", str(path), "--no-progress", timeout=600)
        worker = start_worker(env, base / "worker.log")
        followers = {a for a, _ in train}
        users = sorted(random.Random(SEED).sample(sorted(set(held) & followers), USERS))
        answers = asyncio.run(ask(settings, users))
        yield Served(answers, {u: held[u] for u in users}, train, settings, env, path)
    finally:
        stop_process(worker)
        redis.stop()
        neo4j.down(print)


async def ask(settings: Settings, users: list[str]) -> dict[str, list[str]]:
    """Wait for the worker's first model, then ask each user's suggestions over HTTP."""
    from graphsvc.api.app import create_app

    key = await create_key(settings)
    async with open_services(settings) as services:
        deadline = time.monotonic() + 600
        while (
            state := await services.core.neo4j.ranker_models.state("default")
        ).serving.served == 0:
            assert time.monotonic() < deadline, f"the worker trained no model in 10 min: {state}"
            await asyncio.sleep(2)
        async with AppClient(create_app(settings, services), key) as http:
            answers = {}
            for user in users:
                response = await http.get(f"/v1/users/{user}/suggestions", params={"limit": K})
                assert response.status_code == 200, response.text
                answers[user] = [item["user_id"] for item in response.json()["items"]]
            return answers


def test_the_served_suggestions_beat_the_textbook_heuristics(served: Served) -> None:
    answers, held, train = served.answers, served.held, served.train
    ours = precision(answers, held)
    theirs = {name: precision(tops, held) for name, tops in heuristics(train, sorted(held)).items()}
    best = max(theirs, key=lambda name: theirs[name])
    print(f"served precision@10 {ours:.4f}; {theirs}")
    assert ours > theirs[best], (ours, theirs)


async def test_the_training_holds_out_follows_alone_on_a_graph_without_times(
    served: Served,
) -> None:
    """The training graph has no times (the loader's clock in file order) and most of its
    pairs are mutual: the training's own holdout is random, drawn per follow, so a held-out
    follow whose follow-back stays visible is a positive that shows it follows the user (what
    serving sees before the follow is made), and the report counts it as a follow-back."""
    follows = set(served.train)
    mutual = sum((b, a) in follows for a, b in follows) / len(follows)
    assert mutual > 0.5
    async with open_services(served.settings) as services:
        found = await collect(
            services.core.neo4j.suggestions, services.suggestions, "auto", 0.1, 5, 200
        )
    assert found.holdout == "random" and found.notes == []
    follows_you = FEATURES.index("follows_you")
    positives = [
        (example.user, uid, vector[follows_you], uid in example.backs)
        for example in found.examples
        for uid, vector, label in zip(example.ids, example.vectors, example.labels, strict=True)
        if label
    ]
    assert len(positives) > 100
    backs = [p for p in positives if p[3]]
    assert len(backs) > len(positives) / 3  # a reciprocal graph: many are follow-backs
    # a follow-back shows that the other follows the user; a discovery does not
    assert all(shown == 1.0 for _, _, shown, back in positives if back)
    assert all(shown == 0.0 for _, _, shown, back in positives if not back)
    # the held-out follows are follows of the training graph the user made
    assert all((user, uid) in follows for user, uid, _, _ in positives)
    # and the other half of the pair is what the follow-back is: a follow of the user
    assert all((uid, user) in follows for user, uid, _, back in positives if back)


async def test_a_model_fitted_before_a_load_that_doubled_the_graph_is_flagged_then_replaced(
    served: Served,
) -> None:
    """A second community (the same file under other ids) loaded with `graphsvc load`: the
    load's last line says a training is due, the served model is flagged stale at once, and
    the worker, left alone, replaces it with one fitted on the doubled graph."""
    async with open_services(served.settings) as services:
        models, source = services.core.neo4j.ranker_models, services.suggestions.ranker
        before = (await models.state("default")).serving.served
        assert before and await source.staleness() == []
        loaded = cli(
            served.env,
            "load",
            str(served.path),
            "--prefix",
            "second.",
            "--no-progress",
            timeout=600,
        )
        assert "pymk: a new training is due" in loaded, loaded
        await source.refresh()
        assert [s.reason for s in await source.staleness()] == ["graph_changed"]
        deadline = time.monotonic() + 600
        while (await models.state("default")).serving.served == before:
            assert time.monotonic() < deadline, "the worker did not train again in 10 minutes"
            await asyncio.sleep(2)
        await source.refresh()
        assert await source.staleness() == []
