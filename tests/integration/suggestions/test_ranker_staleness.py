"""The suggestion ranker's staleness where an operator reads it, on the real servers: once
the graph grew past RANKER_TRAIN_GROWTH since the served model was trained, or the last
training failed, `graphsvc ranker status`, /readyz's `ranker` entry (readiness still 200) and the
graphsvc_ranker_model_* gauges say so and why, refreshed by the API process itself; and
`graphsvc load` ends saying when the ranker trains on the graph it made."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from graphsvc.adapters.neo4j.ranker_models import NewModel
from graphsvc.bootstrap import Services
from graphsvc.domain.ranker.scoring import DEFAULT
from graphsvc.ops.ranker import registry as ranker_registry
from tests.support.driver import Driver
from tests.support.helpers import cli
from tests.support.run import RUN

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
MakeService = Callable[..., Services]
REFRESH = 0.1  # RANKER_REFRESH_SECONDS of the tests' API
GROWTH = 1.0  # RANKER_TRAIN_GROWTH: other tests' follows meanwhile never double the graph


async def served(services: Services, edges: int) -> int:
    """A model stored and promoted under the services' model name, trained (its metrics
    say) on ``edges`` follow edges; its version."""
    models = services.core.neo4j.ranker_models
    name = services.settings.suggestions.ranker_model_name
    before = (await models.serving(name)).served
    metrics = {"edges": edges, "holdout": "newest", "precision_at_10": {"model": 0.1}}
    new = NewModel(
        json.dumps(DEFAULT.as_json()),
        json.dumps(metrics),
        time.time_ns() // 1_000,
        edges,
        promote=True,
        expected=before,
        why="made by a test",
    )
    version, promoted = await models.save(name, new)
    assert promoted
    return version


def gauge(text: str, name: str, labels: str = "") -> float:
    found = re.search(rf"^{name}{re.escape(labels)} ([0-9.e+-]+)$", text, re.M)
    assert found, f"{name}{labels} not in /metrics"
    return float(found.group(1))


async def readiness(driver: Driver) -> dict[str, str]:
    """/readyz once the API's own refresh is due again (no refresh is asked by the test)."""
    await asyncio.sleep(2 * REFRESH)
    response = await driver.http.get("/readyz")
    assert response.status_code == 200, response.text  # stale is told, never unready
    body: dict[str, str] = response.json()
    return body


async def test_a_stale_or_failing_ranker_is_told_by_status_readiness_and_metrics(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    settings = {
        "ranker_model_name": uid("model"),
        "ranker_refresh_seconds": REFRESH,
        "ranker_train_growth": GROWTH,
    }
    async with make_driver(**settings) as driver:
        services = driver.services
        await driver.follows(uid("fan"), *(uid("star") for _ in range(10)))
        trained_on = await services.core.neo4j.suggestions.edge_count() // 10  # 10x since
        version = await served(services, trained_on)

        # the graph grew past the bound since the served model was trained
        ready = await readiness(driver)
        assert (ready["neo4j"], ready["redis"]) == ("ok", "ok")
        assert ready["ranker"].startswith(
            f"stale: the served v{version} was trained on {trained_on:,} follow edges, the "
            "graph has "
        ), ready
        assert ready["ranker"].endswith("past the 100% bound)") and "failed" not in ready["ranker"]
        text = (await driver.http.get("/metrics")).text
        assert gauge(text, "graphsvc_ranker_model_stale", '{reason="graph_changed"}') == 1
        assert gauge(text, "graphsvc_ranker_model_stale", '{reason="training_failed"}') == 0
        assert gauge(text, "graphsvc_ranker_model_stale", '{reason="no_model"}') == 0
        assert gauge(text, "graphsvc_ranker_model_edges_growth") >= 9
        lines = await ranker_registry.status_lines(services)
        (stale,) = [line for line in lines if line.startswith("stale: ")]
        assert stale.startswith(f"stale: the served v{version} was trained on {trained_on:,}")

        # a model trained on this graph, then a training that failed
        await served(services, await services.core.neo4j.suggestions.edge_count())
        why = "TrainError: only 3 held-out follows are among the candidates"
        edges = await services.core.neo4j.suggestions.edge_count()
        name = settings["ranker_model_name"]
        await services.core.neo4j.ranker_models.fail(name, time.time_ns() // 1_000, why, edges)
        ready = await readiness(driver)
        assert ready["ranker"] == f"stale: the last training failed: {why}", ready
        text = (await driver.http.get("/metrics")).text
        assert gauge(text, "graphsvc_ranker_model_stale", '{reason="graph_changed"}') == 0
        assert gauge(text, "graphsvc_ranker_model_stale", '{reason="training_failed"}') == 1
        assert gauge(text, "graphsvc_ranker_model_edges_growth") < GROWTH
        lines = await ranker_registry.status_lines(services)
        assert f"stale: the last training failed: {why}" in lines


def graphsvc_load(path: Path, prefix: str, model: str) -> str:
    """`graphsvc load` as an operator runs it, with its own model name and Redis prefix (its
    graph load's mark holds off no other test's training); its output."""
    env = {
        **os.environ,
        "RANKER_MODEL_NAME": model,
        "RANKER_TRAIN_MIN_EDGES": "1",
        "RANKER_TRAIN_GROWTH": str(GROWTH),
        "RANKER_TRAIN_CHECK_SECONDS": "45",
        "REDIS_PREFIX": f"st{RUN}:",
    }
    return cli(env, "load", str(path), "--no-progress", "--prefix", prefix)


async def test_a_load_says_when_the_ranker_trains_on_the_graph_it_made(
    make_service: MakeService,
    uid: UserIds,
    remember: Callable[[list[str]], None],
    tmp_path: Path,
) -> None:
    model, prefix = uid("model"), uid("load") + "."
    remember([prefix + name for name in ("a", "b", "c")])
    path = tmp_path / "edges.txt"
    path.write_text("a b 100\nb c 200\n")

    # nothing served yet: the load says a training is due and when a worker starts it
    out = graphsvc_load(path, prefix, model)
    assert (
        "pymk: a new training is due (no model is served yet): a worker starts it within 45 s"
    ) in out, out

    # a model trained on this graph: no training is due, and the load says when one is
    services = make_service(ranker_model_name=model)
    await served(services, await services.core.neo4j.suggestions.edge_count())
    path.write_text("c a 300\n")
    out = graphsvc_load(path, prefix, model)
    found = re.search(
        r"^pymk: no new training due \(the follow edges grew [+-]\d+% of the 100% bound; "
        r"next at \S+ \S+ \(in [\d.]+ \w+\), or at ([\d,]+) follow edges \(now ([\d,]+)\)\)$",
        out,
        re.M,
    )
    assert found, out
    due, now = (int(group.replace(",", "")) for group in found.groups())
    assert due > now
