"""Graphs for the suggestion ranker's training, on the real servers: follows made as people
make them, loaded by batched transactions, and the trainer's reads of the newest holdout
restricted to one test's graph."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import batches
from graphsvc.ops.data.loader import rebuild_mirror

T0 = 1_700_000_000_000_000  # µs: old enough that loaded edges are never the newest of the DB
# A worker that trains a test's own service as a deployment's would, only sooner: it checks
# often, reads at full speed (nothing is served beside it: the pacing only waits between
# queries, the fit is the same), the API looks for its model every second, and the model it
# promotes goes through a trial in which nobody is shown anything, so it ends served on its
# validation after RANKER_TRIAL_SECONDS (longer than `ranker served`'s poll: it sees the trial).
SERVED_WORKER_ENV = {
    "RANKER_TRAIN_MIN_EDGES": "1000",
    "RANKER_TRAIN_CHECK_SECONDS": "2",
    "RANKER_TRAIN_SHARE": "1",
    "RANKER_REFRESH_SECONDS": "1",
    "RANKER_TRIAL_SHARE": "0.1",
    "RANKER_TRIAL_SECONDS": "6",
}
TRAIN_USERS = 300
TRAIN_EDGES = 4_000  # the newest 400 held out: made by over 200 users


async def load(services: Services, users: list[str], rows: list[dict[str, Any]]) -> int:
    """Users and edges by batched transactions, then the users' mirrors rebuilt."""
    for chunk in batches(users, 10_000):
        await services.core.neo4j.bulk.load_users(chunk)
    created = 0
    for chunk in batches(rows, 10_000):
        created += await services.core.neo4j.bulk.load_edges(chunk)
    await rebuild_mirror(services, users, progress=False)
    return created


def generated_follows(users: list[str], seed: int) -> list[tuple[str, str]]:
    """Follows in the order they were made: a few random ones each, then mostly triadic
    closure (a friend's follow) and follow-backs, so the newest edges are predictable."""
    rng = random.Random(seed)
    follows: dict[str, set[str]] = {u: set() for u in users}
    followers: dict[str, set[str]] = {u: set() for u in users}
    made: list[tuple[str, str]] = []

    def add(a: str, b: str) -> None:
        if a != b and b not in follows[a]:
            follows[a].add(b)
            followers[b].add(a)
            made.append((a, b))

    for u in users:
        for v in rng.sample(users, 3):
            add(u, v)
    while len(made) < TRAIN_EDGES:
        u = rng.choice(users)
        if rng.random() < 0.75:
            v = rng.choice(sorted(follows[u]))
            if follows[v]:
                add(u, rng.choice(sorted(follows[v])))
        elif followers[u]:
            add(u, rng.choice(sorted(followers[u])))
    return made


def newest_holdout_of(
    services: Services, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Make the trainer's two database-wide reads of the newest holdout (holdout_cutoff: the
    time of the newest share of *all* edges; holdout_page and holdout_users: every user who
    followed since)
    read this graph only, as those queries would on a database holding nothing else: the
    shared test database holds other tests' edges, and `train` has no way to restrict itself
    to some users. Everything else (features, fit, validation, storing) is the trainer's."""
    times = sorted(row["t"] for row in rows)

    async def holdout_cutoff(share: float) -> tuple[int, int, int, int]:
        newest = sorted(set(times[-max(1, math.ceil(len(rows) * share)) :]))
        steps = sum(b - a == 1 for a, b in itertools.pairwise(newest))
        return len(rows), newest[0], len(newest), steps

    async def holdout_page(
        cutoff: int, after: tuple[int, str, str] | None, limit: int
    ) -> list[tuple[int, str, str, bool]]:
        made = {(row["s"], row["d"]) for row in rows if row["t"] < cutoff}
        held = sorted((row["t"], row["s"], row["d"]) for row in rows if row["t"] >= cutoff)
        later = [edge for edge in held if after is None or edge > after]
        return [(t, s, d, (d, s) in made) for t, s, d in later[:limit]]

    async def holdout_users(user_ids: list[str], cutoff: int) -> set[str]:
        return set(user_ids) & set(held_since(rows, cutoff))

    store = services.core.neo4j.suggestions
    monkeypatch.setattr(store, "holdout_cutoff", holdout_cutoff)
    monkeypatch.setattr(store, "holdout_page", holdout_page)
    monkeypatch.setattr(store, "holdout_users", holdout_users)


def held_since(rows: list[dict[str, Any]], cutoff: int) -> dict[str, list[str]]:
    """Who followed whom from the cutoff on, for the users who also followed before it."""
    held: dict[str, list[str]] = defaultdict(list)
    before: Counter[str] = Counter()
    for row in rows:
        if row["t"] >= cutoff:
            held[row["s"]].append(row["d"])
        else:
            before[row["s"]] += 1
    return {u: sorted(v) for u, v in held.items() if before[u]}
