"""People you may know: suggestions, their cache, the cold start, and dismissals.

One bounded Cypher query finds friends of friends through the user's closest follows, and
followers not followed back, weighed by affinity and damped by the intermediaries' degrees
(``cypher/suggestions/suggestions.cypher``). The 50 best are cached per user for
SUGGEST_CACHE_SECONDS; writes that change them bump the user's generation (``writes``). Too few
candidates (a user who follows nobody): the most followed accounts fill the list.
"""

from __future__ import annotations

import asyncio
import logging
import time

from redis.exceptions import RedisError

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.domain.errors import InvalidInteraction, InvalidLimit
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Suggestion
from graphsvc.services.fallback import Breaker
from graphsvc.settings import Settings

log = logging.getLogger(__name__)

SUGGESTIONS_KEPT = 50  # computed and cached per user; `limit` takes a prefix
POPULAR_KEPT = 200


class Suggestions:
    def __init__(
        self,
        store: SuggestionStore,
        cache: SuggestionCache,
        breaker: Breaker,
        settings: Settings,
    ) -> None:
        self._store = store
        self.cache = cache
        self._breaker = breaker
        self._settings = settings
        self._popular_lock = asyncio.Lock()

    async def suggestions(self, user_id: str, limit: int) -> list[Suggestion]:
        validate_user_id(user_id)
        if not 1 <= limit <= SUGGESTIONS_KEPT:
            raise InvalidLimit(f"limit must be between 1 and {SUGGESTIONS_KEPT}, got {limit}")

        async def cached() -> list[Suggestion]:
            stored, generation = await self.cache.get(user_id)
            if stored is not None:
                return [Suggestion.from_json(item) for item in stored]
            found = await self.compute(user_id)
            await self.cache.put(user_id, generation, [s.as_json() for s in found])
            return found

        found = await self._breaker.read("suggestions", cached, lambda: self.compute(user_id))
        return found[:limit]

    async def compute(self, user_id: str) -> list[Suggestion]:
        """Suggestions computed now (no cache)."""
        settings = self._settings
        rows = await self._store.suggestions(
            user_id,
            now=time.time_ns() // 1_000,
            h=settings.affinity_half_life_us,
            intermediaries=settings.suggest_intermediaries,
            edges=settings.suggest_edges_per_intermediary,
            alpha=settings.suggest_affinity_weight,
            beta=settings.suggest_damping,
            follower_weight=settings.suggest_follower_weight,
            limit=SUGGESTIONS_KEPT,
        )
        found = [
            Suggestion(row["id"], row["score"], row["mutual"], list(row["via"]),
                       sorted(row["sources"]))
            for row in rows
        ]  # fmt: skip
        if len(found) < SUGGESTIONS_KEPT:  # cold start, or too few: the most followed
            taken = {s.user_id for s in found}
            popular = [uid for uid in await self._popular() if uid not in taken]
            for uid in await self._store.suggestable(user_id, popular):
                if len(found) == SUGGESTIONS_KEPT:
                    break
                found.append(Suggestion(uid, 0.0, 0, [], ["popular"]))
        return found

    async def _popular(self) -> list[str]:
        return await self._breaker.read(
            "popular", self._cached_popular, lambda: self._store.popular(POPULAR_KEPT)
        )

    async def _cached_popular(self) -> list[str]:
        popular = await self.cache.popular()
        if popular is None:
            async with self._popular_lock:  # one scan per process when the list expires
                popular = await self.cache.popular()
                if popular is None:
                    popular = await self._store.popular(POPULAR_KEPT)
                    await self.cache.put_popular(popular, self._settings.popular_cache_seconds)
        return popular

    async def dismiss(self, user_id: str, target_id: str) -> bool:
        """Never suggest the target to the user again."""
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        if user_id == target_id:
            raise InvalidInteraction(f"user {user_id!r} cannot dismiss itself")
        created = await self._store.dismiss(user_id, target_id)
        try:
            await self.cache.invalidate(user_id)
        except REDIS_DOWN as exc:  # committed; a stale cache entry lives SUGGEST_CACHE_SECONDS
            self._breaker.trip(exc)
        except RedisError:
            log.exception("suggestion cache invalidation failed after a dismiss")
        return created
