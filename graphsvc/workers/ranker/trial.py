"""The guard after a promotion: the trial of a ranker a training promoted (rules:
``domain/ranker/trial``).

A training that promotes a model with RANKER_TRIAL_SHARE above zero stores it as the challenger
for that share of users, with the served model's online counts at that moment (``base``);
each round of the worker's training loop (every RANKER_TRAIN_CHECK_SECONDS) judges the trial
(``check``) on the counts since: the model is served to everyone, rolled back, or left on
trial. No training is due while a trial runs. The end is one guarded write
(``ranker_models/end_trial``): a trial an operator ended or replaced meanwhile is left as the
operator left it, and two workers judging at once end it once. With Redis out of reach the
counts cannot be read, and the trial waits for them.
"""

from __future__ import annotations

import json
import logging
import time

from graphsvc.adapters.neo4j.ranker_models import RankerModelStore, RegistryState
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.feedback_counters import FeedbackCounters
from graphsvc.domain.ranker.trial import (
    PROMOTE,
    Arm,
    TrialRules,
    TrialVerdict,
    judge,
    served_name,
)
from graphsvc.settings import SuggestionSettings

log = logging.getLogger(__name__)


class RankerTrial:
    def __init__(
        self, models: RankerModelStore, counters: FeedbackCounters, settings: SuggestionSettings
    ) -> None:
        self._models = models
        self._counters = counters
        self._name = settings.ranker_model_name
        self.rules = TrialRules(
            settings.ranker_trial_share,
            settings.ranker_trial_seconds,
            settings.ranker_trial_min_shown,
        )

    async def base(self, served: int) -> str:
        """The served version's online counts now, as the base of a trial about to begin
        (JSON text; empty when Redis cannot say: the trial then counts the served model's
        whole history)."""
        try:
            counts = (await self._counters.counts()).get(served, {})
        except REDIS_DOWN as exc:
            log.warning("the served ranker's counts could not be read for a trial: %s", exc)
            return "{}"
        return json.dumps({k: counts.get(k, 0) for k in ("shown", "follows")})

    async def progress(self, state: RegistryState) -> TrialVerdict | None:
        """How the running trial stands now (None: no trial runs)."""
        if state.trial_at is None or not state.serving.challenger:
            return None
        counts = await self._counters.counts()
        challenger = _arm(counts.get(state.serving.challenger, {}))
        base = _arm(json.loads(state.trial_base or "{}"))
        incumbent = _arm(counts.get(state.serving.served, {})).since(base)
        elapsed = time.time() - state.trial_at / 1e6
        return judge(challenger, incumbent, elapsed, self.rules, served_name(state.serving.served))

    async def check(self) -> TrialVerdict | None:
        """Judge the running trial, and end it when the verdict says so (None: no trial
        runs, or its counts cannot be read now)."""
        state = await self._models.state(self._name)
        try:
            verdict = await self.progress(state)
        except REDIS_DOWN as exc:
            log.warning("the ranker's trial waits: its counts cannot be read (%s)", exc)
            return None
        if verdict is None or verdict.action is None or state.trial_at is None:
            return verdict
        version = state.serving.challenger
        promote = verdict.action == PROMOTE
        if await self._models.end_trial(self._name, version, state.trial_at, promote, verdict.why):
            log.warning("ranker v%d %s: %s", version, verdict.action, verdict.why)
        return verdict


def _arm(counts: dict[str, int]) -> Arm:
    return Arm(int(counts.get("shown", 0)), int(counts.get("follows", 0)))
