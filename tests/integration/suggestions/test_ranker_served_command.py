"""`graphsvc ranker served` against a running service (an API process and its worker, on
servers of this module's own): it empties the stores, loads the training graph, waits for the
worker's training and for the API to rank with the version it served, asks the API, and
writes the table and the JSON; a graph that is not empty is refused without ``--wipe``, on one
line, and left as it was."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import ThrowawayRedis, cli, own_servers
from tests.support.paths import DATASETS
from tests.support.ranker import SERVED_WORKER_ENV
from tests.support.served import FAULT_ENV, ApiProcess

EMAIL = DATASETS / "email-Eu-core.txt"
LINES = 8_000  # the file's first lines: a graph a training can learn from, loaded in seconds

pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(not EMAIL.exists(), reason="shared/ datasets absent"),
]


@dataclass
class Running:
    env: dict[str, str]
    api: ApiProcess
    graph: Path
    base: Path


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    base = tmp_path_factory.mktemp("ranker-served")
    redis = ThrowawayRedis(base)
    _, neo4j, env = own_servers(base, redis.url)
    env |= {**FAULT_ENV, **SERVED_WORKER_ENV, "RANKER_TRAIN_USERS": "200"}
    graph = base / "email-part.txt"
    graph.write_text("\n".join(EMAIL.read_text().splitlines()[:LINES]) + "\n")
    api = ApiProcess(env, base / "api.log")
    try:
        redis.start()
        neo4j.up(print)
        api.start()
        api.wait_ready()
        yield Running(env, api, graph, base)
    finally:
        api.stop()
        redis.stop()
        neo4j.down(print)


def test_it_judges_what_the_api_serves(running: Running) -> None:
    report = running.base / "report.json"
    out = cli(
        running.env,
        *("ranker", "served", "--edges", str(running.graph), "--seed", "1", "--users", "100"),
        *("--url", running.api.url, "--wipe", "--wait-minutes", "10", "--no-progress"),
        *("--json", str(report)),
        timeout=900,
    )
    # the worker's model went through its trial (nobody was shown anything) before the lists;
    # its number is not always 1: a training of another test's load may end after the wipe
    tried = re.search(r"the worker's training put (v\d+) on trial", out)
    assert tried is not None, out
    version = tried.group(1)
    assert f"the worker's training: promoted ({version}); serving {version}" in out, out
    run = json.loads(report.read_text())["per_seed"][0]
    asked = f"seed 1: {run['users']} users asked through the API; answers by version: {version}:"
    assert asked in out, out
    assert run["users"] == 100 and run["held_out"] > 500
    service = run["scores"]["service"]
    assert service["precision"] > run["scores"]["random"]["precision"]
    assert "service / best of (CN, AA, RA) precision@10" in out


def test_a_graph_that_is_not_empty_is_refused_without_wipe(running: Running) -> None:
    cli(running.env, "load", str(running.graph), "--no-progress")
    argv = ["ranker", "served", "--edges", str(running.graph), "--url", running.api.url]
    refused = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", *argv],
        env=running.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode != 0
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "follows: run against an empty one, or give --wipe" in lines[0]
    assert "held out" not in refused.stdout  # nothing was split, loaded or asked
