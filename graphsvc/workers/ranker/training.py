"""The ranker's self-training: a worker fits a new model on the served graph when one is due,
validates it against the served model and the classic heuristics, and promotes it only when
it is better.

When (``domain/ranker/registry``): no model is served yet and the graph has
RANKER_TRAIN_MIN_EDGES follows; RANKER_TRAIN_EVERY_SECONDS since the last training; or the follow
edges grew by RANKER_TRAIN_GROWTH. A worker checks every RANKER_TRAIN_CHECK_SECONDS (the first
check as it starts) and trains under a lease, so one process trains at a time; `graphsvc
ranker train` and `graphsvc ranker eval` run the same cycle (``train``) under the same lease.

The cycle: hold out edges (``examples``: the newest where the graph's times are real,
else a random share drawn per follow; the other kind when one cannot be made), take up to
RANKER_TRAIN_USERS users with held-out follows, fit the candidate on all of them and, to
validate, each half on a fit of the other (``fit``: evidence only re-weighed), and
score each user's list as served (fills included) for the candidate, the served ranking (the
built-in default when none, or when the served one has features this code cannot read),
common neighbours, Adamic-Adar and resource allocation re-ranking the service's pool, and
the same three computed exactly on the user's training view (``exact``). The verdict
(``domain/ranker/registry.verdict``: paired bootstrap intervals, bands of users, the
discoveries) promotes the candidate, or the best heuristic as a ranker of its own, or
nothing; every model stored keeps its metrics, its status and why.

Loads and errors: a training waits for a running graph load to end (``graph_loads.py``): the
worker's round puts it off while a load holds its mark, and a cycle that fails while a load
runs is put off too (``TrainingPostponed``: no failure is noted, so it is still due at the
next check, which comes after the load). A cycle that meets an error Neo4j says may pass (a
transaction an index build outdated, a server restarting) runs again (``transient_reads``);
one that still fails is a failure, noted with its reason, never a silence.

Crash safety: nothing is written until the very end, where one Neo4j transaction stores the
model and, if it is promoted, moves the served pointer (only if the served model is still the
one it was compared with). A training that raises before that leaves the served model as it
was and notes the failure (the error's line) on the pointer; one whose process dies leaves
nothing, and its lease lapses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from graphsvc.adapters.neo4j.ranker_models import NewModel, RankerModelStore
from graphsvc.adapters.neo4j.store import NEO4J_TRANSIENT
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.leases import Leases
from graphsvc.concurrency.loops import stop_if_asked, stopped
from graphsvc.concurrency.pace import FULL_SPEED, Pace
from graphsvc.concurrency.retries import transient_reads
from graphsvc.domain.ranker.registry import (
    EXACT,
    MODEL,
    TrainError,
    exact_name,
    staleness,
    trigger,
    verdict,
)
from graphsvc.domain.ranker.scoring import DEFAULT, Ranker
from graphsvc.domain.ranker.validation import Scores
from graphsvc.services.ranker import readable, schedule, training_state
from graphsvc.services.suggestions import Suggestions
from graphsvc.settings import SuggestionSettings
from graphsvc.workers.graph_loads import load_running
from graphsvc.workers.ranker.examples import (
    SINGLE,
    Example,
    Progress,
    collect,
    precisions,
    single_feature,
    top_ids,
)
from graphsvc.workers.ranker.trial import RankerTrial

log = logging.getLogger(__name__)

HOLDOUT_SHARE = 0.1
SEED = 1
LEASE_SECONDS = 60.0  # renewed every third of it while the training runs

Fit = Callable[[Sequence[Example], int], Ranker]


class TrainingBusy(TrainError):
    """Another process holds the training's lease."""


class TrainingPostponed(TrainError):
    """A graph load runs, or Neo4j failed the cycle on an error that may pass: nothing was
    stored and no failure noted, so the training is still due."""


@dataclass
class TrainingReport:
    trigger: str
    holdout: str
    users: int
    candidates: int
    positives: int
    held: int
    validation: dict[str, float]  # precision@10 on the validation users, per ranker
    weights: dict[str, float]
    promote: bool  # the verdict (the store may still refuse: see ``promoted``)
    why: str
    model: Ranker = DEFAULT  # the candidate, as validated
    heuristic: Ranker | None = None  # served instead of the model, when the verdict says so
    expected: int = 0  # the served version it was compared with (0: none)
    version: int = 0  # 0: not stored
    promoted: bool = False
    seconds: float = 0.0
    backs: int = 0  # held-out follow-backs of training follows (the newest holdout)
    discoveries: dict[str, float] = field(default_factory=dict)  # precision@10 without them
    intervals: dict[str, dict[str, float | int]] = field(default_factory=dict)  # model - other
    bands: dict[str, dict[str, float | int]] = field(default_factory=dict)  # per band: means
    notes: list[str] = field(default_factory=list)

    def metrics(self, edges: int, share: float, seed: int) -> dict[str, object]:
        """What is stored with the model (and shown by `graphsvc ranker status`)."""
        return {
            "trigger": self.trigger,
            "holdout": self.holdout,
            "share": share,
            "seed": seed,
            "edges": edges,
            "users": self.users,
            "candidates": self.candidates,
            "positives": self.positives,
            "follow_backs": self.backs,
            "precision_at_10": self.validation,
            "discoveries_precision_at_10": self.discoveries,
            "intervals": self.intervals,
            "bands": self.bands,
            "compared_with": self.expected,
            "at": int(time.time()),
        }

    def lines(self) -> list[str]:
        found = self.positives / self.held if self.held else 0.0
        outcome = "promoted" if self.promoted else "rejected" if self.version else "not stored"
        stored = f"v{self.version} {outcome}" if self.version else outcome
        return [
            f"trigger: {self.trigger}; holdout: {self.holdout}; {self.users:,} users, "
            f"{self.candidates:,} candidates, {self.positives:,} of {self.held:,} held-out "
            f"follows among them ({found:.0%}), {self.backs:,} of them follow-backs",
            "precision@10 on the validation users: " + _listed(self.validation),
            *(
                ["without the follow-backs: " + _listed(self.discoveries)]
                if self.discoveries
                else []
            ),
            *(f"{name}: {_interval(i)}" for name, i in self.intervals.items()),
            *(
                f"band {name} ({row['users']} users): "
                + ", ".join(f"{k} {v:.4f}" for k, v in row.items() if k != "users")
                for name, row in self.bands.items()
            ),
            "weights (standardised log features): " + _weights(self.weights),
            *(
                [
                    "weights for the candidates that follow the user: "
                    + _weights(self.model.followers.weights)
                ]
                if self.model.followers is not None
                else []
            ),
            *self.notes,
            f"{stored} ({self.why}) in {self.seconds:.1f}s",
        ]


def _weights(weights: dict[str, float]) -> str:
    return ", ".join(
        f"{n} {w:+.2f}"
        for n, w in sorted(weights.items(), key=lambda item: -abs(item[1]))
        if abs(w) >= 0.005
    )


def _interval(found: dict[str, float | int]) -> str:
    return f"{found['lift']:+.4f} [{found['low']:+.4f}, {found['high']:+.4f}]"


def _listed(scores: dict[str, float]) -> str:
    return ", ".join(f"{name} {value:.4f}" for name, value in scores.items())


class RankerTraining:
    def __init__(
        self,
        models: RankerModelStore,
        store: SuggestionStore,
        suggestions: Suggestions,
        leases: Leases,
        settings: SuggestionSettings,
        trial: RankerTrial,
    ) -> None:
        self._models = models
        self.trial = trial
        self._store = store
        self._suggestions = suggestions
        self._leases = leases
        self._name = settings.ranker_model_name
        self._lease = TrainingLease(leases, settings.ranker_model_name)
        self._users = settings.ranker_train_users
        self._exact_max = settings.ranker_validation_max_edges
        self._pace = Pace(settings.ranker_train_share)
        self.round_seconds = settings.ranker_train_check_seconds
        self.schedule = schedule(settings)

    async def due(self) -> str | None:
        """Why a training is due now (None: it is not)."""
        state = training_state(await self._models.state(self._name))
        return trigger(state, await self._store.edge_count(), time.time(), self.schedule)

    async def round(self) -> bool:
        """A round of the worker's training loop: train when due, unless a graph load runs;
        the next check comes RANKER_TRAIN_CHECK_SECONDS later."""
        await self.trial.check()
        if await load_running(self._leases):
            log.info("ranker training put off: a graph load is running")
            return False
        reason = await self.due()
        if reason is None:
            return False
        try:
            report = await self.train(reason, progress=None, pace=self._pace)
        except TrainingBusy:
            return False
        except TrainingPostponed as exc:  # a warning: a Neo4j that stays down says so
            log.warning("ranker training (%s) put off: %s", reason, exc)
            return False
        except TrainError as exc:
            log.warning("ranker training (%s) failed: %s", reason, exc)
            return False
        log.info("ranker training: %s", "; ".join(report.lines()))
        return False

    async def train(
        self,
        reason: str = "asked",
        *,
        holdout: str = "auto",
        share: float = HOLDOUT_SHARE,
        seed: int = SEED,
        users: int | None = None,
        store: bool = True,
        force: bool = False,
        fit: Fit | None = None,
        progress: Progress | None = None,
        pace: Pace = FULL_SPEED,
    ) -> TrainingReport:
        """One training cycle, under the lease (``TrainingBusy`` when another process holds
        it). ``store``: False reports but writes nothing; ``force``: promote whatever the
        validation says, to every user at once (no trial); ``fit``: the fitting function (the
        logistic regression); ``pace``: the worker's share of Neo4j (an operator's command runs
        at full speed)."""
        if not 0 < share < 1:
            raise TrainError(f"the held-out share must be between 0 and 1, got {share}")
        started = time.monotonic()
        async with self._lease.held():
            edges = await self._store.edge_count()
            try:
                report = await self._retried(
                    reason, holdout, share, seed, users or self._users, fit, progress, pace
                )
                if (force and report.heuristic is not None) or (force and not report.promote):
                    report.heuristic = None
                    report.promote, report.why = True, f"forced by an operator; {report.why}"
                if store:
                    if await _loading(self._leases):
                        raise TrainingPostponed("a graph load started while it trained")
                    trial = Trial(0.0 if force else self.trial.rules.share)
                    if trial.share and report.promote:
                        trial = Trial(trial.share, await self.trial.base(report.expected))
                    await _saved(self._models, self._name, report, (edges, share, seed), trial)
            except Exception as exc:
                await self._failed(exc, edges, store)
                raise
        report.seconds = time.monotonic() - started
        return report

    async def _retried(self, *cycle: Any) -> TrainingReport:
        """The cycle, again after an error Neo4j says may pass, unless a graph load runs (it
        would outdate the next attempt too: the training is put off to after it)."""

        def transient(exc: BaseException) -> bool:
            return isinstance(exc, NEO4J_TRANSIENT)

        return await transient_reads("ranker training", transient)(
            self._cycle_unless_loading, *cycle
        )

    async def _cycle_unless_loading(self, *cycle: Any) -> TrainingReport:
        try:
            return await self._cycle(*cycle)
        except NEO4J_TRANSIENT as exc:
            if await _loading(self._leases):
                raise TrainingPostponed(f"a graph load runs ({_why(exc)})") from exc
            raise

    async def _cycle(
        self,
        reason: str,
        holdout: str,
        share: float,
        seed: int,
        users: int,
        fit: Fit | None,
        progress: Progress | None,
        pace: Pace,
    ) -> TrainingReport:
        state = await self._models.state(self._name)
        served = readable(state.serving.served, state.body) or DEFAULT
        found = await collect(
            self._store, self._suggestions, holdout, share, seed, users, progress, pace
        )
        examples = sorted(found.examples, key=lambda e: e.user)
        notes = [
            *found.notes,
            await exact_heuristics(self._store, self._exact_max, found.before, examples, pace),
        ]
        if fit is None:
            from graphsvc.workers.ranker.fit import fit  # numpy and SciPy: only here
        candidate, out_of_fold = await asyncio.to_thread(
            cross_fitted, fit, examples, seed, found.holdout == "random"
        )
        label = served_label(served)
        heuristics = {name: single_feature(f, name) for name, f in SINGLE.items()}
        rankers = {**heuristics, label: served}
        measured = validation_scores(rankers, out_of_fold, examples, seed)
        changed = staleness(training_state(state), await self._store.edge_count(), self.schedule)
        stale = any(s.reason == "graph_changed" for s in changed)
        discovered = discoveries(rankers, out_of_fold, examples, seed)
        decided = verdict(measured, label, list(SINGLE), not served.version, stale, discovered)
        backs = sum(len(e.backs) for e in examples)
        return TrainingReport(
            trigger=reason,
            holdout=found.holdout,
            users=len(examples),
            candidates=sum(len(e.ids) for e in examples),
            positives=sum(sum(e.labels) for e in examples),
            held=sum(e.held for e in examples),
            validation=dict(measured.whole),
            weights=dict(candidate.weights),
            promote=decided.promote is not None,
            why=decided.why,
            model=candidate,
            heuristic=heuristics.get(decided.promote or ""),
            expected=state.serving.served,
            backs=backs,
            discoveries=discovered.whole if discovered else {},
            intervals=intervals(measured, label),
            bands=measured.band_table(list(measured.per_user)),
            notes=[*(note for note in notes if note), f"validated on {len(examples)} users"],
        )

    async def _failed(self, exc: Exception, edges: int, store: bool) -> None:
        """What a cycle that raised ``exc`` leaves: put off (``TrainingPostponed`` raised
        from it) while a graph load runs, else the failure noted (when the cycle stores)."""
        if isinstance(exc, TrainingPostponed):
            return
        if await _loading(self._leases):
            raise TrainingPostponed(f"a graph load runs ({_why(exc)})") from exc
        if store:
            await self._note_failure(exc, edges)

    async def _note_failure(self, exc: Exception, edges: int) -> None:
        """Note the failed attempt (best effort: the store may be what failed)."""
        why = _why(exc)
        try:
            await self._models.fail(self._name, time.time_ns() // 1_000, why, edges)
        except Exception as noted:  # the original failure is what the caller sees
            log.warning("could not note the failed ranker training (%s): %s", why, noted)


class TrainingLease:
    """One process trains a model name at a time: a Redis lease, renewed every third of it
    while the training runs, released at its end (or left to lapse when Redis cannot be
    reached, or the process dies)."""

    def __init__(self, leases: Leases, name: str) -> None:
        self._leases = leases
        self._model = name
        self._name = f"ranker-training:{name}"

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        token = await self._leases.take(self._name, LEASE_SECONDS)
        if token is None:
            raise TrainingBusy(f"another process is training the ranker {self._model!r} now")
        renewing = asyncio.create_task(self._renew(token))
        try:
            yield
        finally:
            await stopped([renewing])
            with suppress(*REDIS_DOWN):  # else it lapses by itself
                await self._leases.release(self._name, token)

    async def _renew(self, token: str) -> None:
        """Until cancelled, even when the cancel reached it inside a Redis call that turned it
        into an error of its own (``stop_if_asked``): a renewal that went on would keep the
        training's end waiting for it, and the lease held."""
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            try:
                if not await self._leases.renew(self._name, token, LEASE_SECONDS):
                    log.warning("the ranker training's lease ran out; another may train")
                    return
            except REDIS_DOWN as exc:
                log.warning("cannot renew the ranker training's lease: %s", exc)
            stop_if_asked()


@dataclass(frozen=True, slots=True)
class Trial:
    """How a promoted ranker is first served: to ``share`` of users (0: to all at once), the
    served model's online counts as it begins in ``base`` (JSON text)."""

    share: float
    base: str = "{}"


async def _saved(
    models: RankerModelStore,
    name: str,
    report: TrainingReport,
    drawn: tuple[int, float, int],
    trial: Trial,
) -> None:
    """The cycle's writes: the model, and the served pointer if promoted (or the model put on
    ``trial``); when a heuristic is served instead, the model is stored rejected and the
    heuristic promoted. ``drawn``: the follow edges, the held-out share, the seed."""
    edges = drawn[0]
    metrics = report.metrics(*drawn)
    instead = report.heuristic
    promote = report.promote and instead is None
    version, promoted = await _store_model(
        models, name, report, report.model, metrics, edges, promote, trial
    )
    if instead is not None:
        version, promoted = await _store_model(
            models, name, report, instead, metrics, edges, True, trial
        )
    report.version, report.promoted = version, promoted
    if report.promote and not report.promoted:
        report.why = "another model was promoted while this one trained"


async def _store_model(
    models: RankerModelStore,
    name: str,
    report: TrainingReport,
    model: Ranker,
    metrics: dict[str, object],
    edges: int,
    promote: bool,
    trial: Trial,
) -> tuple[int, bool]:
    """Store one model of a training (promoted, put on trial, or rejected with the report's
    why)."""
    body = dataclasses.replace(model, trained={**model.trained, **metrics}).as_json()
    new = NewModel(
        body=json.dumps(body),
        metrics=json.dumps(metrics),
        created=time.time_ns() // 1_000,
        edges=edges,
        promote=promote,
        expected=report.expected,
        why=report.why,
        trial=trial.share if promote else 0.0,
        trial_base=trial.base,
    )
    return await models.save(name, new)


async def _loading(leases: Leases) -> bool:
    """Whether a graph load runs now (False when Redis cannot say: a failure the cycle met
    stays the failure it is)."""
    try:
        return await load_running(leases)
    except REDIS_DOWN:
        return False


def _why(exc: Exception) -> str:
    """An error on one line, bounded: what a failed or put-off training says."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500]


def served_label(served: Ranker) -> str:
    """What the served ranking is called in a training's scores: its heuristic's name when it
    is one, its version, or the built-in default."""
    if served.trained.get("heuristic"):
        return str(served.trained["heuristic"])
    return f"served v{served.version}" if served.version else "the built-in default"


async def exact_heuristics(
    store: SuggestionStore,
    most: int,
    before: int | None,
    examples: list[Example],
    pace: Pace,
) -> str:
    """Each example's exact heuristics and band, from the training graph read whole; a graph
    past ``most`` follows (RANKER_VALIDATION_MAX_EDGES) is not read, and the note says so."""
    edges = await store.edge_count()
    if edges > most:
        return (
            f"the graph has {edges:,} follows, past RANKER_VALIDATION_MAX_EDGES ({most:,}): "
            "judged against the service's own heuristics only"
        )
    from graphsvc.workers.ranker import exact as ranker_exact  # numpy and SciPy: only here

    graph = await ranker_exact.read(store, before, pace)
    await asyncio.to_thread(ranker_exact.annotate, graph, examples)
    return ""


def cross_fitted(
    fit: Fit, examples: Sequence[Example], seed: int, timeless: bool
) -> tuple[Ranker, dict[str, Ranker]]:
    """(the model fitted on every user, and per user the model fitted on the other half of
    the users): each user is validated by a fit that never saw it, so every sampled user is a
    validation user. ``timeless``: the fits learn nothing from the features that tell time
    (a random holdout's)."""
    fitting = [e.timeless() for e in examples] if timeless else list(examples)
    shuffled = list(range(len(fitting)))
    random.Random(seed).shuffle(shuffled)
    halves = (set(shuffled[0::2]), set(shuffled[1::2]))
    out_of_fold: dict[str, Ranker] = {}
    for half in halves:
        others = [e for n, e in enumerate(fitting) if n not in half]
        model = fit(others, seed) if others else DEFAULT
        out_of_fold |= {fitting[n].user: model for n in half}
    return fit(fitting, seed), out_of_fold


def validation_scores(
    rankers: dict[str, Ranker],
    out_of_fold: dict[str, Ranker],
    examples: Sequence[Example],
    seed: int,
) -> Scores:
    """Each user's precision@10 of the list each ranker would serve it (the model's, by the
    fit that never saw the user), and of each exact heuristic's list when the examples have
    them."""
    per_user = {name: precisions(ranker, examples) for name, ranker in rankers.items()}
    per_user[MODEL] = [e.precision(top_ids(out_of_fold[e.user], e)) for e in examples]
    if examples and examples[0].exact:
        for name in SINGLE:
            per_user[exact_name(name)] = [e.hits(e.exact[name]) for e in examples]
    return Scores(per_user, [e.band for e in examples], seed)


def discoveries(
    rankers: dict[str, Ranker],
    out_of_fold: dict[str, Ranker],
    examples: Sequence[Example],
    seed: int,
) -> Scores | None:
    """The lists scored with the held-out follow-backs not counted, over the users with other
    held-out follows (None when no follow-back was held out)."""
    if not any(e.backs for e in examples):
        return None
    found = [e.discoveries() for e in examples if e.truth - e.backs]
    return validation_scores(rankers, out_of_fold, found, seed)


def intervals(scores: Scores, served: str) -> dict[str, dict[str, float | int]]:
    """The model's intervals over the served ranking and over each heuristic (stored with the
    model, shown by `graphsvc ranker status`)."""
    return {
        f"model - {name}": scores.interval(MODEL, name).as_json()
        for name in scores.per_user
        if name != MODEL and (name == served or name.endswith(EXACT) or name in SINGLE)
    }
