"""The client as a user installs it: a fresh virtual environment with the `client` extra only
(the locked versions of requirements-client.lock) and the project built as a wheel, nothing of
the server, walking a 2,500-follower list of the suite's served API from outside the checkout."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import Edges
from graphsvc.ops.data.loader import load_edges
from tests.support.paths import ROOT

FOLLOWERS = 2_500
SERVER_ONLY = [
    "graphsvc.domain",
    "graphsvc.api",
    "graphsvc.settings",
    "itsdangerous",
    "neo4j",
    "redis",
    "fastapi",
    "starlette",
    "uvicorn",
    "pydantic_settings",
    "orjson",
]

SCRIPT = """
import importlib.util, sys
from datetime import datetime
from graphsvc.client import GraphClient, GraphError, Unavailable
for name in {server_only!r}:
    assert name not in sys.modules, name + " was imported"
for name in ("itsdangerous", "neo4j", "redis", "fastapi", "pydantic_settings"):
    assert importlib.util.find_spec(name) is None, name + " is installed"
with GraphClient({url!r}, api_key={key!r}) as graph:
    items = list(graph.followers({star!r}))
    frame = graph.followers({star!r}, limit=10).to_pandas()
    print(len(items), len({{i.user_id for i in items}}), type(items[0].since).__name__,
          frame["since"].dtype.kind, graph.counts({star!r}).followers)
try:
    GraphClient("http://127.0.0.1:9", api_key="k", max_retries=0).counts("a")
except Unavailable as exc:
    print(exc.code, exc.url)
"""


@pytest.fixture(scope="module")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the client extra's locked versions and the project's wheel, no more."""
    venv = tmp_path_factory.mktemp("client-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    uv = Path(sys.executable).with_name("uv")
    install = [str(uv), "pip", "install", "--quiet", "--python", str(python)]
    lock = ROOT / "requirements-client.lock"
    subprocess.run([*install, "--require-hashes", "-r", str(lock)], check=True)
    subprocess.run([*install, "--no-deps", str(ROOT)], check=True)
    return python


async def test_the_client_installs_alone_and_walks_a_list(
    client_python: Path, api: str, service: Services, service_key: str, uid, tmp_path: Path
) -> None:
    star = uid("star")
    base = int(time.time()) * 1_000_000
    rows = [(uid(f"fan{n}"), star, base - n) for n in range(FOLLOWERS)]
    await load_edges(service, Edges.from_rows(rows), progress=False)
    script = SCRIPT.format(url=api, key=service_key, star=star, server_only=SERVER_ONLY)
    run = subprocess.run(
        [str(client_python), "-c", script],
        cwd=tmp_path,  # outside the checkout: graphsvc comes from the venv
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    walked, unrefused = run.stdout.splitlines()
    assert walked.split() == [str(FOLLOWERS), str(FOLLOWERS), "datetime", "M", str(FOLLOWERS)]
    assert unrefused == "unreachable http://127.0.0.1:9/v1/users/a/counts"
