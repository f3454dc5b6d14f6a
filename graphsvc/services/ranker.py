"""The rankers an API process serves: the promoted version of RANKER_MODEL_NAME (the built-in
default when none was promoted) and, during an A/B split, the challenger for the users whose
hash falls in its share (``domain/ranker/registry``).

Policy: a process reads the pointer (served version, challenger, share) at most every
RANKER_REFRESH_SECONDS (tiny reads, on the request path but shared by concurrent
requests through a single flight), and reads a model only when its version changed. So a
model the worker promotes, or an operator's promote or split, is served by every process
within that time, without a restart. A stored model this version cannot read (other
features) is logged and skipped: the process keeps the served model it has (and runs no split
with an unreadable challenger) rather than failing suggestions. If Neo4j cannot be asked, the
current rankers are kept; the suggestions themselves need Neo4j anyway.

Staleness: the same refresh reads the registry's state and the follow edge count (O(1)) and
keeps why the served model is stale (``domain/ranker/registry.staleness``) for ``/readyz`` and
the ``graphsvc_ranker_model_*`` gauges, which ask for a refresh at the same cadence: an operator
sees a stale or failing training without a read per request.
"""

from __future__ import annotations

import json
import logging
import time

from graphsvc.adapters.neo4j.ranker_models import RankerModelStore, RegistryState, Serving
from graphsvc.adapters.neo4j.store import STORE_DOWN
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.concurrency.single_flight import SingleFlight
from graphsvc.domain.ranker.registry import (
    STALE_REASONS,
    Schedule,
    Stale,
    TrainingState,
    drift,
    staleness,
    takes_challenger,
)
from graphsvc.domain.ranker.scoring import DEFAULT, Ranker
from graphsvc.services.telemetry import RANKER_MODEL_DRIFT, RANKER_MODEL_STALE
from graphsvc.settings import SuggestionSettings

log = logging.getLogger(__name__)


def readable(version: int, body: str | None) -> Ranker | None:
    """The stored model as a ranker, or None when this version cannot read it."""
    if body is None:
        return None
    try:
        return Ranker.from_json({**json.loads(body), "version": version})
    except (ValueError, KeyError, TypeError):
        return None


def schedule(settings: SuggestionSettings) -> Schedule:
    """The training's triggers (RANKER_TRAIN_*), as the worker and the staleness read them."""
    return Schedule(
        every_seconds=settings.ranker_train_every_seconds,
        retry_seconds=settings.ranker_train_retry_seconds,
        growth=settings.ranker_train_growth,
        min_edges=settings.ranker_train_min_edges,
    )


def training_state(state: RegistryState) -> TrainingState:
    """The triggers' view of the registry: a served model this code cannot read counts as
    none (a version with other features: this one trains its own at once)."""
    served = state.serving.served
    if served and readable(served, state.body) is None:
        served = 0
    edges = json.loads(state.metrics).get("edges") if served and state.metrics else None
    return TrainingState(
        served=served,
        served_edges=edges,
        attempt_at=state.attempt_at / 1e6 if state.attempt_at is not None else None,
        attempt_outcome=state.attempt_outcome,
        attempt_edges=state.attempt_edges,
        attempt_why=state.attempt_why,
        trial=state.trial_at is not None,
    )


class RankerSource:
    def __init__(
        self, store: RankerModelStore, graph: SuggestionStore, settings: SuggestionSettings
    ) -> None:
        self._store = store
        self._graph = graph
        self._schedule = schedule(settings)
        self._stale: list[Stale] | None = None  # None: the registry was not read yet
        self._name = settings.ranker_model_name
        self._every = settings.ranker_refresh_seconds
        self._served: Ranker = DEFAULT
        self._challenger: Ranker | None = None
        self._share = 0.0
        self._unreadable: set[int] = set()
        self._made: dict[int, int] = {}  # version -> when the loaded model was stored
        self._checked = float("-inf")
        self._flight = SingleFlight(concurrency=1, wait_seconds=10.0)

    async def ranker(self) -> Ranker:
        """The served model."""
        await self._fresh()
        return self._served

    async def ranker_for(self, user_id: str) -> Ranker:
        """The model that ranks this user's suggestions: the challenger for the split's share
        of users, else the served model."""
        await self._fresh()
        challenger = self._challenger
        if challenger is not None and takes_challenger(user_id, challenger.version, self._share):
            return challenger
        return self._served

    async def staleness(self) -> list[Stale] | None:
        """Why the served model is stale (empty: it is not; None: the registry could not be
        read yet), as of the last refresh, made first when one is due."""
        await self._fresh()
        return self._stale

    async def _fresh(self) -> None:
        if time.monotonic() - self._checked >= self._every:
            await self._flight.run("refresh", self.refresh)

    async def refresh(self) -> Ranker:
        """Read the pointer now (and any model whose version changed) and why the served
        model is stale; the served model."""
        self._checked = time.monotonic()
        try:
            serving = await self._store.serving(self._name)
            await self._load(serving)
            await self._judge()
        except STORE_DOWN as exc:
            log.warning(
                "cannot look for a newer ranker, keeping v%d: %s", self._served.version, exc
            )
        return self._served

    async def _judge(self) -> None:
        """Read why the served model is stale, and set the gauges that tell it."""
        state = training_state(await self._store.state(self._name))
        edges = await self._graph.edge_count()
        found = staleness(state, edges, self._schedule)
        self._stale = found
        for reason in STALE_REASONS:
            RANKER_MODEL_STALE.labels(reason).set(int(any(s.reason == reason for s in found)))
        RANKER_MODEL_DRIFT.set(drift(state, edges) or 0.0)

    async def _load(self, serving: Serving) -> None:
        have = {self._served.version, *([self._challenger.version] if self._challenger else [])}
        made = {
            serving.served: serving.served_created,
            serving.challenger: serving.challenger_created,
        }
        if any(self._made.get(v, made[v]) != made[v] for v in have if v in made):
            # the registry was made anew (a wipe): the same number names another model
            have, self._unreadable = set(), set()
        self._made |= {v: t for v, t in made.items() if v}
        wanted = [v for v in (serving.served, serving.challenger) if v]
        missing = [v for v in wanted if v not in have and v not in self._unreadable]
        bodies = await self._store.bodies(self._name, missing) if missing else {}
        loaded = {r.version: r for r in (self._served, self._challenger) if r is not None}
        for version in missing:
            ranker = readable(version, bodies.get(version))
            if ranker is None:
                self._unreadable.add(version)
                log.error("ranker %s v%d cannot be served by this version", self._name, version)
            else:
                loaded[version] = ranker
        if serving.served == 0:
            self._served = DEFAULT
        elif serving.served in loaded:
            self._served = loaded[serving.served]
        self._challenger = loaded.get(serving.challenger) if serving.challenger else None
        self._share = serving.share
