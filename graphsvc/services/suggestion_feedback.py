"""The feedback of suggestions: recommendation ids issued with every answer, and
what users do with a suggestion counted for the ranker version that ranked it.

Counted per version (``adapters/redis/feedback_counters``): answers and items served (queued on
the round trip that reads the shows, so a cached answer costs no round trip more), shows
recorded as impressions, follows attributed, dismissals. Only what carries a recommendation
id the service issued to that user within SUGGEST_RECOMMENDATION_TTL_SECONDS counts, and only
for a target that id's answer served (its users are signed into it, ``domain/recommendation_ids``).

Policy:
- A malformed, altered or another user's id is a 422 ``invalid_recommendation_id``, checked
  before anything is written: the request changes nothing. An expired id is accepted and
  counts nothing (``graphsvc_recommendations_not_counted_total{reason="expired"}``): a user who
  follows a week-old suggestion still follows.
- A follow, show or dismissal of a target the id's answer did not serve is made and counts
  nothing (``reason="not_served"``): a client cannot credit a version with what it did not
  rank.
- A follow counts once, and only when it made the edge: not a repeat (``created`` false), nor a
  request to a locked account (it is no follow yet, and its approval carries no id), nor a
  retry or the same id replayed for the same target (a mark per id and target). A dismissal
  counts when it is new; shows count as the impressions use case counted them.
- Counting comes after the write is committed, and a Redis failure never fails the request:
  the count is lost (``reason="redis"``), logged, and the breaker opens on an unreachable Redis.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Coroutine, Sequence
from typing import Any

from graphsvc.adapters.failures import RedisError
from graphsvc.adapters.neo4j.ranker_models import RankerModelStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.feedback_counters import FeedbackCounters
from graphsvc.adapters.redis.impressions import Alongside
from graphsvc.concurrency.breaker import Breaker
from graphsvc.domain.ranker.online_figures import VersionFigures, figures
from graphsvc.domain.recommendation_ids import Recommendation, RecommendationCodec
from graphsvc.services.telemetry import RECOMMENDATIONS_NOT_COUNTED
from graphsvc.settings import PageSettings, SuggestionSettings

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SuggestionFeedback:
    def __init__(
        self,
        counters: FeedbackCounters,
        models: RankerModelStore,
        breaker: Breaker,
        settings: SuggestionSettings,
        lists: PageSettings,
    ) -> None:
        self.counters = counters
        self._models = models
        self._breaker = breaker
        self.model = settings.ranker_model_name
        self._ttl_ms = settings.suggest_recommendation_ttl_seconds * 1_000
        self._codec = RecommendationCodec(lists.cursor_secret)

    def issue(self, user_id: str, version: int, served: Sequence[str]) -> str:
        """The id of an answer made now for the user, ranked by ``version``, that served
        these users (what the id may count for)."""
        digests = self._codec.digests(served)
        return self._codec.encode(Recommendation(version, user_id, _now_ms(), digests))

    def carried(self, user_id: str, recommendation_id: str | None) -> Recommendation | None:
        """The recommendation a request of ``user_id`` carries, if it can count: None for
        none, or an expired one; InvalidRecommendationId (a 422) for a malformed, altered or
        another user's id. Called before anything is written."""
        if recommendation_id is None:
            return None
        recommendation = self._codec.decode(recommendation_id, user_id)
        if recommendation.expired(_now_ms(), self._ttl_ms):
            RECOMMENDATIONS_NOT_COUNTED.labels("expired").inc()
            return None
        return recommendation

    def served_on(self, version: int, items: int) -> list[Alongside]:
        """The counters of one answer of ``items`` suggestions, queued on another read's
        round trip (``Impressions.rerank``)."""
        counters = self.counters
        return [
            lambda pipe: counters.count_on(pipe, version, "answers", 1),
            lambda pipe: counters.count_on(pipe, version, "items", items),
        ]

    def _served(self, recommendation: Recommendation, target_ids: Sequence[str]) -> int:
        """How many of these targets the recommendation's answer served; the others are
        noted as not counted."""
        served = sum(self._codec.served(recommendation, target) for target in target_ids)
        if unserved := len(target_ids) - served:
            RECOMMENDATIONS_NOT_COUNTED.labels("not_served").inc(unserved)
        return served

    async def followed(self, recommendation: Recommendation | None, target_id: str) -> None:
        """A follow that made the edge, after its commit: counted once per id and target,
        for a target the id's answer served."""
        if recommendation is None or not self._served(recommendation, [target_id]):
            return
        life_ms = recommendation.issued_ms + self._ttl_ms - _now_ms()
        await self._count(
            "follow", self.counters.count_follow_once(recommendation, target_id, life_ms)
        )

    async def shown(self, recommendation: Recommendation | None, counted: Sequence[str]) -> None:
        """Shows the impressions use case counted (of these targets), after it did: those
        of targets the id's answer served."""
        if recommendation is None or not counted:
            return
        if served := self._served(recommendation, counted):
            await self._count("shows", self.counters.add(recommendation.version, "shown", served))

    async def dismissed(
        self, recommendation: Recommendation | None, created: bool, target_id: str
    ) -> None:
        """A new dismissal, after its commit, of a target the id's answer served."""
        if recommendation is None or not created:
            return
        if not self._served(recommendation, [target_id]):
            return
        await self._count("dismissal", self.counters.add(recommendation.version, "dismissals"))

    async def _count(self, what: str, count: Coroutine[Any, Any, object]) -> None:
        """A count after a committed write: skipped while the breaker is open, and never
        raising (the write stands; only the figure misses it)."""
        if self._breaker.open:
            count.close()
            RECOMMENDATIONS_NOT_COUNTED.labels("redis").inc()
            return
        try:
            await count
        except REDIS_DOWN as exc:
            self._breaker.trip(exc)
            RECOMMENDATIONS_NOT_COUNTED.labels("redis").inc()
        except RedisError as exc:  # up but refusing (OOM, READONLY...)
            log.warning("redis refused to count a %s of a recommendation (%s)", what, exc)
            RECOMMENDATIONS_NOT_COUNTED.labels("redis").inc()

    async def report(self) -> list[VersionFigures]:
        """Every counted version's figures, beside the precision@10 each stored version
        measured on its validation users when it was trained."""
        counts = await self.counters.counts()
        stored = await self._models.metrics(self.model, sorted(counts))
        return figures(
            counts, {v: p for v, text in stored.items() if (p := _offline(text)) is not None}
        )


def _offline(metrics: str | None) -> float | None:
    """The model's own precision@10 on validation users, from its stored metrics."""
    try:
        value = json.loads(metrics or "{}").get("precision_at_10", {}).get("model")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) else None
