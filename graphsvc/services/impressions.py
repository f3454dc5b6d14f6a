"""Impression discounting of people you may know: record which suggestions a user was shown,
and sink those shown more than SUGGEST_IMPRESSIONS_FREE times (``domain/impressions``).

Shows are counted in Redis (``adapters/redis/impressions``). The discount is applied to the
computed (and cached) list when it is served, not stored in the cache: a recorded show then
moves the order at the next request, with no cache invalidation. The discount only refines an
order; when Redis cannot be reached the list is served undiscounted rather than not at all.

Only served suggestions count (``domain/impressions`` has the policy): serving a list remembers
its ids, and a show of any other id, or of one past SUGGEST_IMPRESSIONS_MAX, is ignored and
counted by ``graphsvc_impressions_ignored_total{reason}`` (``not_served``, ``cap``). A list
served while Redis refuses its note is still served; its shows are then ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphsvc.adapters.failures import RedisError
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.impressions import Alongside, ImpressionStore
from graphsvc.concurrency.breaker import Breaker
from graphsvc.domain.errors import SelfAction, TooManyIds
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.impressions import discount_factor, rerank
from graphsvc.domain.model import Suggestion
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.telemetry import IMPRESSIONS_IGNORED
from graphsvc.settings import SuggestionSettings

log = logging.getLogger(__name__)

IMPRESSIONS_MAX_IDS = 50  # a page of suggestions holds at most 50 (SUGGESTIONS_KEPT)


class Impressions:
    def __init__(
        self,
        store: ImpressionStore,
        breaker: Breaker,
        settings: SuggestionSettings,
        feedback: SuggestionFeedback,
    ) -> None:
        self.store = store
        self._breaker = breaker
        self._settings = settings
        self._feedback = feedback

    async def record(
        self, user_id: str, target_ids: Sequence[str], recommendation_id: str | None = None
    ) -> tuple[int, int]:
        """Count one show of each target (all or nothing: a bad id records none): (how many
        distinct targets were counted, how many were ignored: not served to the user, or no
        room). A target listed twice is one show. The shows counted count for the version of
        a recommendation id, when one is carried, for the targets its answer served."""
        validate_user_id(user_id)
        if not 1 <= len(target_ids) <= IMPRESSIONS_MAX_IDS:
            raise TooManyIds(
                f"ids must name 1 to {IMPRESSIONS_MAX_IDS} users, got {len(target_ids)}"
            )
        for target_id in target_ids:
            validate_user_id(target_id, "ids item")
            if target_id == user_id:
                raise SelfAction(f"user {user_id!r} cannot be shown itself")
        recommendation = self._feedback.carried(user_id, recommendation_id)
        distinct = list(dict.fromkeys(target_ids))
        try:
            counted, unserved, full = await self.store.record(user_id, distinct)
        except REDIS_DOWN as exc:  # a 503; the next read skips Redis for a while
            self._breaker.trip(exc)
            raise
        if unserved:
            IMPRESSIONS_IGNORED.labels("not_served").inc(unserved)
        if full:
            IMPRESSIONS_IGNORED.labels("cap").inc(full)
        await self._feedback.shown(recommendation, counted)
        return len(counted), unserved + full

    async def served(self, user_id: str, suggestions: Sequence[Suggestion]) -> None:
        """Note the suggestions just served to the user (only their shows count). A failure
        is logged, never raised: the list is served all the same."""
        if not suggestions or self._breaker.open:
            return
        try:
            await self.store.served(user_id, [s.user_id for s in suggestions])
        except REDIS_DOWN as exc:
            self._breaker.trip(exc)
        except RedisError as exc:  # up but refusing (OOM, READONLY...)
            log.warning("redis refused the note of served suggestions (%s)", exc)

    async def discount(self, user_id: str, target_id: str) -> tuple[int, float]:
        """How often the target was shown to the user, and what its score is multiplied by
        when served (1.0 when Redis cannot be reached: served undiscounted then too)."""
        if self._breaker.open:
            return 0, 1.0
        try:
            shows = (await self.store.shows(user_id, [target_id])).get(target_id, 0)
        except REDIS_DOWN as exc:
            self._breaker.trip(exc)
            return 0, 1.0
        settings = self._settings
        return shows, discount_factor(
            shows, settings.suggest_impressions_free, settings.suggest_impression_decay
        )

    async def rerank(
        self, user_id: str, suggestions: list[Suggestion], *alongside: Alongside
    ) -> list[Suggestion]:
        """The suggestions discounted by how often each was shown, best first; unchanged when
        Redis cannot be reached (or the breaker says it could not a moment ago).
        ``alongside``: other commands taken along in the same round trip."""
        validate_user_id(user_id)
        if not suggestions or self._breaker.open:
            return suggestions
        try:
            shows = await self.store.shows(user_id, [s.user_id for s in suggestions], *alongside)
        except REDIS_DOWN as exc:
            self._breaker.trip(exc)
            return suggestions
        except RedisError as exc:  # up but refusing (OOM, READONLY...): this read only
            log.warning("redis refused an impressions read (%s); served undiscounted", exc)
            return suggestions
        settings = self._settings
        return rerank(
            suggestions, shows, settings.suggest_impressions_free, settings.suggest_impression_decay
        )
