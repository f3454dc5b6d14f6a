"""`graphsvc ranker served`: people you may know judged as a user gets them, from a running
service: the evaluation's holdout (``offline.split``), the rest loaded as `graphsvc load`
loads it, the service's own worker left to train, then ten suggestions asked through the API
for the sampled users and scored against the exact heuristics on the same training graph.

Why through the running service: a figure measured on a model fitted by hand, or on the
service's objects in this process, is not the figure a user gets. Here nothing is trained or
ranked by this command: the worker trains on its own triggers (its first training is due as
soon as the load ends), the API processes pick the promoted ranker up on their own refresh,
and the command only waits for both, with deadlines, and reads what the API answers. Each
answer's recommendation id names the ranker version that ranked it (its payload is readable),
so the table says which version served the lists.

Each seed starts from an empty graph: a graph that is not empty is refused unless ``wipe``
(which deletes every user, follow, key and model of the service's stores), so the command is
for an evaluation's own deployment, never a live one.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tqdm import tqdm

from graphsvc.bootstrap import Services, open_services
from graphsvc.domain.access import Scope
from graphsvc.domain.recommendation_ids import named_version
from graphsvc.ops.evaluation.offline import (
    METHODS,
    Baselines,
    Dataset,
    K,
    SeedResult,
    Summary,
    count_of,
    describe,
    load_split,
    sample_users,
    scored,
    split,
    summarize,
)
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.client import AsyncGraphClient

ASK_AT_ONCE = 4
POLL_SECONDS = 2.0


class ServedEvaluationError(Exception):
    """The protocol cannot go on (a graph not empty, a training that failed or never came);
    the message says why, on one line."""


@dataclass(frozen=True, slots=True)
class Target:
    """The running service: its API's address, the settings its stores are reached with, and
    how long to wait for its worker's training."""

    url: str
    settings: Settings
    wait_seconds: float
    wipe: bool


async def _emptied(services: Services, wipe: bool) -> None:
    edges = await services.core.neo4j.suggestions.edge_count()
    if edges and not wipe:
        raise ServedEvaluationError(
            f"the service's graph holds {edges:,} follows: run against an empty one, or give "
            "--wipe to delete everything in its stores first"
        )
    await services.maintenance.wipe()


async def _trained(services: Services, since_us: int, wait: float, say: Callable) -> int:
    """Wait until the worker finished a training that began after the load (and the trial
    of the model it promoted), and return the version served after it (0: the built-in
    default)."""
    models = services.core.neo4j.ranker_models
    name = services.settings.suggestions.ranker_model_name
    deadline = time.monotonic() + wait
    trial_told = False
    while True:
        state = await models.state(name)
        if state.trial_at is not None and state.trial_at >= since_us:
            if not trial_told:
                say(f"the worker's training put v{state.serving.challenger} on trial")
                trial_told = True
        elif state.attempt_at is not None and state.attempt_at >= since_us:
            if state.attempt_outcome == "failed":
                raise ServedEvaluationError(f"the worker's training failed: {state.attempt_why}")
            say(
                f"the worker's training: {state.attempt_outcome} "
                f"(v{state.attempt_version}); serving v{state.serving.served}"
            )
            return state.serving.served
        if time.monotonic() > deadline:
            raise ServedEvaluationError(
                f"no training finished within {wait:.0f} s of the load: is `graphsvc worker` "
                "running over these stores?"
            )
        await asyncio.sleep(POLL_SECONDS)


async def _served_by(
    services: Services, http: AsyncGraphClient, probe: str, version: int, wait: float
) -> None:
    """Wait until the API ranks with ``version`` (each API process refreshes its ranker on
    its own clock): asked for a user outside the sample, its cached list dropped each time."""
    deadline = time.monotonic() + wait
    while True:
        await services.suggestions.cache.invalidate(probe)
        answer = await http.suggestions(probe, limit=K)
        if named_version(answer.recommendation_id) == version:
            return
        if time.monotonic() > deadline:
            raise ServedEvaluationError(
                f"the API still ranks with another version than v{version} after {wait:.0f} s"
            )
        await asyncio.sleep(POLL_SECONDS)


async def _ask(
    http: AsyncGraphClient, sample: list[str], progress: bool
) -> tuple[dict[str, list[str]], Counter[int]]:
    """Each sampled user's ten suggestions through the API (a 429 is waited out, as the client
    honours Retry-After), and how many answers each ranker version served."""
    found: dict[str, list[str]] = {}
    versions: Counter[int] = Counter()
    with tqdm(total=len(sample), desc="API", unit="user", disable=not progress) as bar:
        for start in range(0, len(sample), ASK_AT_ONCE):
            chunk = sample[start : start + ASK_AT_ONCE]
            answers = await asyncio.gather(*(http.suggestions(u, limit=K) for u in chunk))
            for user, answer in zip(chunk, answers, strict=True):
                found[user] = [item.user_id for item in answer.items]
                versions[named_version(answer.recommendation_id)] += 1
            bar.update(len(chunk))
    return found, versions


async def served_seed(
    target: Target, data: Dataset, seed: int, users: int, progress: bool, say: Callable
) -> SeedResult:
    """One seed: emptied stores, the split, the load, the worker's training, the API."""
    from graphsvc.client import AsyncGraphClient

    async with open_services(target.settings) as services:
        await _emptied(services, target.wipe)
        cut = split(data, seed, time.time_ns() // 1_000)
        say(describe(data, cut, seed))
        loaded = time.time_ns() // 1_000
        await load_split(services, cut, progress)
        version = await _trained(services, loaded, target.wait_seconds, say)
        key = await services.access.create(frozenset({Scope.READ}), name="ranker served evaluation")
        sample = sample_users(cut, seed, users)
        probe = next(u for u in sorted({u for pair in cut.train for u in pair}) if u not in sample)
        async with AsyncGraphClient(target.url or None, key.token, max_retries=20) as http:
            await _served_by(services, http, probe, version, target.wait_seconds)
            answers, versions = await _ask(http, sample, progress)
        await services.access.revoke(key.key.id)
    served = ", ".join(f"v{v}: {n}" for v, n in sorted(versions.items()))
    say(f"seed {seed}: {len(sample)} users asked through the API; answers by version: {served}")
    raw = {"service": answers}
    baselines = Baselines(cut.train, seed)
    for method in METHODS[1:]:
        bar = tqdm(sample, desc=method, unit="user", disable=not progress)
        raw[method] = {user: baselines.recommend(method, user) for user in bar}
    scores = scored(raw, cut, baselines, seed, say)
    return SeedResult(seed, len(sample), scores, count_of(cut.held), count_of(cut.follow_backs))


async def served_seeds(
    target: Target,
    data: Dataset,
    seeds: list[int],
    users: int,
    progress: bool,
    say: Callable,
) -> Summary:
    """``served_seed`` per seed, then the spread over seeds (the table of `ranker eval`)."""
    runs = [await served_seed(target, data, seed, users, progress, say) for seed in seeds]
    return summarize(data, users, runs)
