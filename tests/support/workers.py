"""Servers of its own for each pytest-xdist worker.

`make test` runs the suite on several worker processes (``pytest -n``). Tests share servers
safely only one at a time: some empty Redis, load a dataset under its own ids, move the
interactions' checkpoint or run a worker whose relay takes every outbox event. So the first
worker (``gw0``, or a run without workers) uses the servers the environment names, and worker
N uses a Neo4j and a Redis of its own: the same addresses with each port raised by
``PORT_STEP * N``, and its state under ``$STATE_DIR/worker-N`` (`make stop-test` stops them
with the rest). The environment is changed before anything reads the settings, so every
`graphsvc` process a test starts inherits the worker's servers too.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from graphsvc.settings import LocalServerSettings, Settings

PORT_STEP = 10
# The addresses a worker moves, with their defaults (the settings' own).
ADDRESSES = {
    "NEO4J_URI": lambda: Settings().neo4j.neo4j_uri,
    "REDIS_URL": lambda: Settings().redis.redis_url,
    "EVAL_NEO4J_URI": lambda: LocalServerSettings().eval_neo4j_uri,
    "EVAL_REDIS_URL": lambda: LocalServerSettings().eval_redis_url,
}


def number() -> int:
    """This process's worker number: 0 for ``gw0`` and for a run without workers."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


def moved(address: str, by: int) -> str:
    """``address`` with its port raised by ``by``."""
    parts = urlsplit(address)
    assert parts.hostname and parts.port, f"an address with a host and a port: {address}"
    return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{parts.port + by}"))


def use_own_servers() -> bool:
    """Point this worker's environment at servers of its own (worker 1 and up); whether it
    did. A Redis Cluster's nodes sit on consecutive ports, so a cluster run has one worker."""
    worker = number()
    if worker == 0:
        return False
    if os.environ.get("REDIS_CLUSTER", "").lower() in {"1", "true", "yes"}:
        raise RuntimeError("the suite on a Redis Cluster runs on one worker: drop -n")
    defaults = {name: default() for name, default in ADDRESSES.items()}
    for name, default in defaults.items():
        os.environ[name] = moved(os.environ.get(name) or default, PORT_STEP * worker)
    state = Path(os.environ.get("STATE_DIR") or LocalServerSettings().state_dir)
    os.environ["STATE_DIR"] = str(state / f"worker-{worker}")
    return True
