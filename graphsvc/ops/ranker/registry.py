"""The ranker's registry for an operator: what is served and why, whether it is stale, the
A/B split, the last training and the next one (`graphsvc ranker status`, and what `graphsvc
load` says after a load), and the operator's moves: promote a version (a rollback), start or
end a split."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from graphsvc.adapters.neo4j.ranker_models import RegistryState, StoredModel
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.bootstrap import Operated
from graphsvc.domain.ranker.registry import TrainingState, baseline, due_at, staleness, trigger
from graphsvc.domain.ranker.trial import TrialVerdict, served_name
from graphsvc.services.ranker import readable, training_state

RECENT = 10


class RegistryRefused(Exception):
    """An operator's move the registry refused; the message says why."""


def when(us: int | None) -> str:
    """A time in µs as UTC, with how long ago it was."""
    if us is None:
        return "never"
    seconds = us / 1e6
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    return f"{stamp} ({_span(time.time() - seconds)} ago)"


def _span(seconds: float) -> str:
    seconds = abs(seconds)
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _metrics(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def _precision(metrics: dict[str, Any]) -> str:
    return _listed(metrics.get("precision_at_10", {})) or "none recorded"


def _judged(metrics: dict[str, Any]) -> list[str]:
    """What the validation said beyond the means: without the held-out follow-backs, the
    model's bootstrap intervals, and the bands of users."""
    lines = []
    if found := metrics.get("discoveries_precision_at_10"):
        lines.append("  without the follow-backs: " + _listed(found))
    for name, interval in metrics.get("intervals", {}).items():
        lines.append(
            f"  {name}: {interval['lift']:+.4f} [{interval['low']:+.4f}, {interval['high']:+.4f}]"
        )
    for band, row in metrics.get("bands", {}).items():
        means = {k: v for k, v in row.items() if k != "users"}
        lines.append(f"  band {band} ({row['users']} users): {_listed(means)}")
    return lines


def _listed(scores: dict[str, float]) -> str:
    return ", ".join(f"{name} {value:.4f}" for name, value in scores.items())


def served_lines(state: RegistryState) -> list[str]:
    served = state.serving.served
    if not served:
        return ["served: the built-in default (no model promoted yet)"]
    metrics = _metrics(state.metrics)
    ranker = readable(served, state.body)
    heuristic = ranker.trained.get("heuristic") if ranker is not None else None
    lines = [
        f"served: v{served}, promoted {when(state.promoted_at)}"
        + (" (its features are not this version's: trained again at once)" if not ranker else "")
        + (f" ({heuristic}: no fitted model beat it)" if heuristic else ""),
        f"  why: {state.served_why or 'not recorded'}",
        f"  trained on {metrics.get('edges', 0):,} follow edges, holdout "
        f"{metrics.get('holdout', '?')}, {metrics.get('users', 0):,} users",
        f"  validation precision@10: {_precision(metrics)}",
        *_judged(metrics),
    ]
    return lines


def challenger_line(state: RegistryState, trial: TrialVerdict | None) -> str:
    """The A/B split's challenger, or the model on trial and how its trial stands."""
    challenger, share = state.serving.challenger, state.serving.share
    if not challenger:
        return "challenger: none"
    if state.trial_at is None:
        return f"challenger: v{challenger} for {share:.0%} of users (an operator's split)"
    standing = trial.why if trial is not None else "its online counts cannot be read now"
    return (
        f"on trial: v{challenger} for {share:.0%} of users since {when(state.trial_at)}, "
        f"against {served_name(state.serving.served)}: {standing}"
    )


def attempt_line(state: RegistryState) -> str:
    if state.attempt_at is None:
        return "last training: none yet"
    outcome = state.attempt_outcome or "?"
    model = f" v{state.attempt_version}" if state.attempt_version else ""
    return f"last training: {when(state.attempt_at)}: {outcome}{model}: {state.attempt_why}"


def next_line(parts: Operated, state: RegistryState, edges: int) -> str:
    training = parts.background.ranker_training
    view = training_state(state)
    if view.trial:
        return f"next training: once the trial of v{state.serving.challenger} ends"
    reason = trigger(view, edges, time.time(), training.schedule)
    if reason is not None:
        return f"next training: due now ({reason}; a worker checks every {training.round_seconds:.0f} s)"
    return f"next training: {_next(parts, view, edges)}"


def _next(parts: Operated, view: TrainingState, edges: int) -> str:
    """When the next training is due, by time or by follow edges."""
    at, grown = due_at(view, parts.background.ranker_training.schedule)
    timing = (
        ""
        if at is None
        else f"at {when(int(at * 1e6)).split(' (')[0]} (in {_span(at - time.time())}), or "
    )
    return f"{timing}at {grown:,} follow edges (now {edges:,})"


def stale_line(parts: Operated, state: RegistryState, edges: int) -> str:
    schedule = parts.background.ranker_training.schedule
    found = staleness(training_state(state), edges, schedule)
    return "stale: " + ("; ".join(s.line for s in found) or "no")


async def load_line(parts: Operated) -> str:
    """After a graph load: when the suggestion ranker is trained on the graph it made."""
    training = parts.background.ranker_training
    name = parts.settings.suggestions.ranker_model_name
    view = training_state(await parts.maintenance.ranker_models.state(name))
    edges = await parts.maintenance.edge_count()
    reason = trigger(view, edges, time.time(), training.schedule)
    if reason is not None:
        return (
            f"pymk: a new training is due ({reason}): a worker starts it within "
            f"{training.round_seconds:.0f} s"
        )
    since = baseline(view)
    bound = f"{training.schedule.growth:.0%} bound"
    grown = f"the follow edges grew {edges / since - 1:+.0%} of the {bound}; " if since else ""
    return f"pymk: no new training due ({grown}next {_next(parts, view, edges)})"


def model_rows(models: list[StoredModel]) -> list[str]:
    rows = [
        f"{'version':>7}  {'created':20}  {'status':10}  {'edges':>9}  {'holdout':7}  "
        f"{'p@10':>6}  why"
    ]
    for model in models:
        metrics = _metrics(model.metrics)
        p10 = metrics.get("precision_at_10", {}).get("model")
        created = datetime.fromtimestamp(model.created / 1e6, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        rows.append(
            f"{model.version:>7}  {created:20}  {model.status:10}  "
            f"{model.edges or 0:>9,}  {metrics.get('holdout', '-'):7}  "
            f"{'-' if p10 is None else f'{p10:.4f}':>6}  {model.why}"
        )
    return rows


async def status_lines(parts: Operated) -> list[str]:
    name = parts.settings.suggestions.ranker_model_name
    models = parts.maintenance.ranker_models
    state = await models.state(name)
    edges = await parts.maintenance.edge_count()
    recent = await models.recent(name, RECENT)
    try:
        trial = await parts.background.ranker_training.trial.progress(state)
    except REDIS_DOWN:
        trial = None
    lines = [f"model: {name}", *served_lines(state), challenger_line(state, trial)]
    lines.append(stale_line(parts, state, edges))
    lines += [attempt_line(state), next_line(parts, state, edges)]
    if recent:
        lines += ["recent models:", *model_rows(recent)]
    return lines


async def promote(parts: Operated, version: int) -> str:
    """Serve ``version`` now (every API process within RANKER_REFRESH_SECONDS)."""
    name = parts.settings.suggestions.ranker_model_name
    models = parts.maintenance.ranker_models
    body = (await models.bodies(name, [version])).get(version)
    if body is None:
        raise RegistryRefused(f"model {name!r} has no version {version}")
    if readable(version, body) is None:
        raise RegistryRefused(f"v{version} has features this version cannot serve")
    refused, previous = await models.promote(
        name, version, time.time_ns() // 1_000, "promoted by an operator"
    )
    if refused is not None:
        raise RegistryRefused(f"model {name!r} has no version {version}")
    return f"v{version} is served (was {f'v{previous}' if previous else 'the built-in default'})"


async def split(parts: Operated, version: int, share: float) -> str:
    name = parts.settings.suggestions.ranker_model_name
    models = parts.maintenance.ranker_models
    body = (await models.bodies(name, [version])).get(version)
    if body is not None and readable(version, body) is None:
        raise RegistryRefused(f"v{version} has features this version cannot serve")
    refused = await models.split(name, version, share)
    if refused == "unknown_version":
        raise RegistryRefused(f"model {name!r} has no version {version}")
    if refused == "served":
        raise RegistryRefused(f"v{version} is the served model; a challenger is another one")
    return (
        f"v{version} ranks {share:.0%} of users (by a hash of their id), the served model the rest"
    )


async def split_off(parts: Operated) -> str:
    name = parts.settings.suggestions.ranker_model_name
    was = await parts.maintenance.ranker_models.split_off(name)
    return f"split ended (challenger was v{was})" if was else "there was no split"
