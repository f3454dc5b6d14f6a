"""The ranker's self-training: a worker fits a new model on the served graph when one is due,
validates it against the served model and the classic heuristics, and promotes it only when
it is better.

When (``domain/ranker_models``): no model is served yet and the graph has
PYMK_TRAIN_MIN_EDGES follows; PYMK_TRAIN_EVERY_SECONDS since the last training; or the follow
edges grew by PYMK_TRAIN_GROWTH. A worker checks every PYMK_TRAIN_CHECK_SECONDS (the first
check as it starts) and trains under a lease, so one process trains at a time; `graphsvc
train-pymk` and `graphsvc eval-pymk` run the same cycle (``train``) under the same lease.

The cycle: hold out edges (``ranker_examples``: the newest, or a random share for a graph
without real times), sample PYMK_TRAIN_USERS users, fit the candidate on 80% of them, and
measure precision@10 on the other 20% for the candidate, the served model (the built-in
default when none, or when the served one has features this code cannot read), and common
neighbours, Adamic-Adar and resource allocation. The validated model is the one stored, with
its metrics, its status and why.

Loads: a training waits for a running graph load to end (``graph_loads.py``): the worker's
round puts it off while a load holds its mark, and a cycle that fails while a load runs, or
on an error Neo4j says may pass (a transaction an index build outdated, a server restarting),
is put off too (``TrainingPostponed``): no failure is noted, so it is still due at the next
check.

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

from graphsvc.adapters.neo4j.ranker_models import NewModel, RankerModelStore
from graphsvc.adapters.neo4j.store import NEO4J_TRANSIENT
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.leases import Leases
from graphsvc.domain.ranker_models import TrainError, trigger, verdict
from graphsvc.domain.ranking import DEFAULT, Ranker
from graphsvc.services.ranker import readable, schedule, training_state
from graphsvc.services.suggestions import Suggestions
from graphsvc.settings import SuggestionSettings
from graphsvc.workers.graph_loads import load_running
from graphsvc.workers.ranker_examples import (
    SINGLE,
    Example,
    Progress,
    collect,
    precision_at_k,
    single_feature,
)

log = logging.getLogger(__name__)

HOLDOUT_SHARE = 0.1
VALIDATION_SHARE = 0.2
MIN_POSITIVES = 20
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
    expected: int = 0  # the served version it was compared with (0: none)
    version: int = 0  # 0: not stored
    promoted: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def metrics(self, edges: int, share: float, seed: int) -> dict[str, object]:
        """What is stored with the model (and shown by `graphsvc pymk status`)."""
        return {
            "trigger": self.trigger,
            "holdout": self.holdout,
            "share": share,
            "seed": seed,
            "edges": edges,
            "users": self.users,
            "candidates": self.candidates,
            "positives": self.positives,
            "precision_at_10": self.validation,
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
            f"follows among them ({found:.0%})",
            "precision@10 on the validation users: "
            + ", ".join(f"{name} {value:.4f}" for name, value in self.validation.items()),
            "weights (standardised log features): "
            + ", ".join(
                f"{n} {w:+.2f}"
                for n, w in sorted(self.weights.items(), key=lambda item: -abs(item[1]))
                if abs(w) >= 0.005
            ),
            *self.notes,
            f"{stored} ({self.why}) in {self.seconds:.1f}s",
        ]


class RankerTraining:
    def __init__(
        self,
        models: RankerModelStore,
        store: SuggestionStore,
        suggestions: Suggestions,
        leases: Leases,
        settings: SuggestionSettings,
    ) -> None:
        self._models = models
        self._store = store
        self._suggestions = suggestions
        self._leases = leases
        self._name = settings.pymk_model_name
        self._users = settings.pymk_train_users
        self.round_seconds = settings.pymk_train_check_seconds
        self.schedule = schedule(settings)

    async def due(self) -> str | None:
        """Why a training is due now (None: it is not)."""
        state = training_state(await self._models.state(self._name))
        return trigger(state, await self._store.edge_count(), time.time(), self.schedule)

    async def round(self) -> bool:
        """A round of the worker's training loop: train when due, unless a graph load runs;
        the next check comes PYMK_TRAIN_CHECK_SECONDS later."""
        if await load_running(self._leases):
            log.info("ranker training put off: a graph load is running")
            return False
        reason = await self.due()
        if reason is None:
            return False
        try:
            report = await self.train(reason, progress=None)
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
    ) -> TrainingReport:
        """One training cycle, under the lease (``TrainingBusy`` when another process holds
        it). ``store``: False reports but writes nothing; ``force``: promote whatever the
        validation says; ``fit``: the fitting function (the logistic regression)."""
        if not 0 < share < 1:
            raise TrainError(f"the held-out share must be between 0 and 1, got {share}")
        started = time.monotonic()
        async with self._lease():
            edges = await self._store.edge_count()
            try:
                report = await self._cycle(
                    reason, holdout, share, seed, users or self._users, fit, progress
                )
                if force and not report.promote:
                    report.promote, report.why = True, f"forced by an operator; {report.why}"
                if store:
                    if await _loading(self._leases):
                        raise TrainingPostponed("a graph load started while it trained")
                    await self._save(report, edges, share, seed)
            except Exception as exc:
                await self._failed(exc, edges, store)
                raise
        report.seconds = time.monotonic() - started
        return report

    async def _cycle(
        self,
        reason: str,
        holdout: str,
        share: float,
        seed: int,
        users: int,
        fit: Fit | None,
        progress: Progress | None,
    ) -> TrainingReport:
        state = await self._models.state(self._name)
        served = readable(state.serving.served, state.body) or DEFAULT
        used, examples = await collect(
            self._store, self._suggestions, holdout, share, seed, users, progress
        )
        positives = sum(sum(e.labels) for e in examples)
        if positives < MIN_POSITIVES:
            raise TrainError(
                f"only {positives} held-out follows are among the candidates of {len(examples)} "
                f"users; a model needs at least {MIN_POSITIVES} (a larger graph or share)"
            )
        validation, fitting = _split_users(examples, seed)
        if fit is None:
            from graphsvc.workers.ranker_fit import fit  # numpy and scikit-learn: only here
        candidate = await asyncio.to_thread(fit, fitting, seed)
        scores = {"model": precision_at_k(candidate, validation)}
        label = f"served v{served.version}" if served.version else "the built-in default"
        scores[label] = precision_at_k(served, validation)
        for name, feature in SINGLE.items():
            scores[name] = precision_at_k(single_feature(feature), validation)
        heuristics = {name: scores[name] for name in SINGLE}
        promote, why = verdict(scores["model"], scores[label], label, heuristics)
        return TrainingReport(
            trigger=reason,
            holdout=used,
            users=len(examples),
            candidates=sum(len(e.ids) for e in examples),
            positives=positives,
            held=sum(e.held for e in examples),
            validation=scores,
            weights=dict(candidate.weights),
            promote=promote,
            why=why,
            model=candidate,
            expected=state.serving.served,
            notes=[f"compared with {label} on {len(validation)} validation users"],
        )

    async def _save(self, report: TrainingReport, edges: int, share: float, seed: int) -> None:
        """The one write of the cycle: the model, and the served pointer if promoted."""
        metrics = report.metrics(edges, share, seed)
        body = dataclasses.replace(report.model, trained=metrics).as_json()
        new = NewModel(
            body=json.dumps(body),
            metrics=json.dumps(metrics),
            created=time.time_ns() // 1_000,
            edges=edges,
            promote=report.promote,
            expected=report.expected,
            why=report.why,
        )
        report.version, report.promoted = await self._models.save(self._name, new)
        if report.promote and not report.promoted:
            report.why = "another model was promoted while this one trained"

    async def _failed(self, exc: Exception, edges: int, store: bool) -> None:
        """What a cycle that raised ``exc`` leaves: put off (``TrainingPostponed`` raised
        from it) while a graph load runs or when Neo4j's error may pass, else the failure
        noted (when the cycle stores)."""
        if isinstance(exc, TrainingPostponed):
            return
        if isinstance(exc, NEO4J_TRANSIENT) or await _loading(self._leases):
            raise TrainingPostponed(f"it met an error that may pass ({_why(exc)})") from exc
        if store:
            await self._note_failure(exc, edges)

    async def _note_failure(self, exc: Exception, edges: int) -> None:
        """Note the failed attempt (best effort: the store may be what failed)."""
        why = _why(exc)
        try:
            await self._models.fail(self._name, time.time_ns() // 1_000, why, edges)
        except Exception as noted:  # the original failure is what the caller sees
            log.warning("could not note the failed ranker training (%s): %s", why, noted)

    @asynccontextmanager
    async def _lease(self) -> AsyncIterator[None]:
        name = f"pymk-training:{self._name}"
        token = await self._leases.take(name, LEASE_SECONDS)
        if token is None:
            raise TrainingBusy(f"another process is training the ranker {self._name!r} now")
        renewing = asyncio.create_task(self._renew(name, token))
        try:
            yield
        finally:
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            with suppress(*REDIS_DOWN):  # else it lapses by itself
                await self._leases.release(name, token)

    async def _renew(self, name: str, token: str) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            try:
                if not await self._leases.renew(name, token, LEASE_SECONDS):
                    log.warning("the ranker training's lease ran out; another may train")
                    return
            except REDIS_DOWN as exc:
                log.warning("cannot renew the ranker training's lease: %s", exc)


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


def _split_users(examples: Sequence[Example], seed: int) -> tuple[list[Example], list[Example]]:
    """(validation, fitting): a seeded VALIDATION_SHARE of the users, and the rest."""
    shuffled = sorted(examples, key=lambda e: e.user)
    random.Random(seed).shuffle(shuffled)
    cut = max(1, int(len(shuffled) * VALIDATION_SHARE))
    return shuffled[:cut], shuffled[cut:]
