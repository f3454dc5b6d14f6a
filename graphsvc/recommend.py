"""People you may know: interactions, affinity and suggestions (use cases).

Affinity a(u, v) is the sum over u's and v's interactions with each other of
weight x 2^(-age / half-life). It is never shown to users: it orders friends (closest first)
and weighs the paths behind a suggestion.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from redis.exceptions import RedisError

from graphsvc.degraded import MIRROR_DOWN, Breaker
from graphsvc.errors import InvalidInteraction, InvalidLimit
from graphsvc.graph import GraphStore
from graphsvc.ids import is_user_id, validate_user_id
from graphsvc.interaction_buffer import Event, InteractionBuffer, SuggestionCache
from graphsvc.model import micros_from_datetime
from graphsvc.settings import Settings

log = logging.getLogger(__name__)

DAY_US = 86_400 * 1_000_000
# Affinity keys of score-ordered lists are taken at this fixed time, so a cursor's key stays
# comparable as time passes (decay scales every key alike). 2^(years x 26) stays a finite
# double for decades at a 14-day half-life.
AFFINITY_REFERENCE_US = micros_from_datetime(datetime(2020, 1, 1, tzinfo=UTC))
SUGGESTIONS_KEPT = 50  # computed and cached per user; `limit` takes a prefix
POPULAR_KEPT = 200


@dataclass(frozen=True, slots=True)
class InteractionIn:
    actor: str
    target: str
    kind: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Suggestion:
    user_id: str
    score: float
    mutual_count: int
    via: list[str]
    sources: list[str]

    def as_json(self) -> dict[str, object]:
        return {
            "user_id": self.user_id,
            "score": round(self.score, 6),
            "reasons": {"mutual_count": self.mutual_count, "via": self.via},
            "sources": self.sources,
        }


def combine(
    first: tuple[float, int], second: tuple[float, int], half_life_us: int
) -> tuple[float, int]:
    """Two decayed weights (w, as of t) as one, as of the later time."""
    (w1, t1), (w2, t2) = first, second
    t = max(t1, t2)
    return w1 * 2.0 ** ((t1 - t) / half_life_us) + w2 * 2.0 ** ((t2 - t) / half_life_us), t


def aggregate(events: Sequence[Event], half_life_us: int) -> list[dict[str, object]]:
    """One decayed (w, at) per (actor, target), sorted (a stable lock order in Neo4j)."""
    pairs: dict[tuple[str, str], tuple[float, int]] = {}
    for actor, target, weight, at in events:
        key = (actor, target)
        pairs[key] = (
            combine(pairs[key], (weight, at), half_life_us) if key in pairs else (weight, at)
        )
    return [{"a": a, "b": b, "w": w, "at": at} for (a, b), (w, at) in sorted(pairs.items())]


class PeopleYouMayKnow:
    def __init__(
        self,
        graph: GraphStore,
        buffer: InteractionBuffer,
        cache: SuggestionCache,
        settings: Settings,
        breaker: Breaker | None = None,
    ) -> None:
        self.graph = graph
        self.buffer = buffer
        self.cache = cache
        self.settings = settings
        self._breaker = breaker or Breaker(settings.redis_retry_seconds)
        self.half_life_us = int(settings.affinity_half_life_days * DAY_US)
        self._popular_lock = asyncio.Lock()

    # -- interactions -------------------------------------------------------------------------

    async def record(self, events: Sequence[InteractionIn]) -> int:
        """Validate a batch (all or nothing) and buffer it durably; returns how many."""
        settings = self.settings
        if not 1 <= len(events) <= settings.interactions_max_batch:
            raise InvalidInteraction(
                f"a batch holds 1 to {settings.interactions_max_batch} events, got {len(events)}"
            )
        horizon = time.time_ns() // 1_000 + settings.interactions_max_future_seconds * 1_000_000
        buffered: list[Event] = []
        for n, event in enumerate(events):
            for name in ("actor", "target"):
                value = getattr(event, name)
                if not is_user_id(value):
                    raise InvalidInteraction(f"event {n}: {name} {value!r} is not a valid user id")
            if event.actor == event.target:
                raise InvalidInteraction(f"event {n}: {event.actor!r} interacts with itself")
            weight = settings.interaction_weights.get(event.kind)
            if weight is None:
                known = ", ".join(sorted(settings.interaction_weights))
                raise InvalidInteraction(f"event {n}: unknown kind {event.kind!r} (known: {known})")
            moment = event.at if event.at.tzinfo else event.at.replace(tzinfo=UTC)
            at = micros_from_datetime(moment)
            if at > horizon:
                raise InvalidInteraction(f"event {n}: time {event.at.isoformat()} is in the future")
            buffered.append((event.actor, event.target, weight, at))
        await self.buffer.append(buffered)
        return len(buffered)

    async def record_raw(self, events: Sequence[Event]) -> None:
        """Buffer already validated events (actor, target, weight, µs): loaders, evaluation."""
        if events:
            await self.buffer.append(events)

    async def flush(self) -> int:
        """Write one round of buffered batches to Neo4j; returns how many events went."""
        last = await self.graph.interactions_checkpoint()
        batches = await self.buffer.read_after(last, self.settings.interactions_flush_entries)
        if not batches:
            return 0
        events = [event for batch in batches for event in batch.events]
        applied = await self.graph.apply_interactions(
            aggregate(events, self.half_life_us),
            checkpoint=last,
            last=batches[-1].entry_id,
            half_life_us=self.half_life_us,
        )
        if not applied:  # another process flushed these first
            return 0
        await self.buffer.trim(batches[-1].entry_id)
        return len(events)

    async def flush_all(self) -> int:
        """Flush until the buffer is empty (tests, the CLI)."""
        total = 0
        while flushed := await self.flush():
            total += flushed
        return total

    async def run_flusher(self) -> None:
        """The write-behind loop of a serving process (any number may run: exactly once)."""
        while True:
            try:
                if await self.flush():
                    continue
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("flushing interactions failed; retrying")
            await asyncio.sleep(self.settings.interactions_flush_seconds)

    async def affinities(self, user_id: str, limit: int) -> list[tuple[str, float]]:
        validate_user_id(user_id)
        if not 1 <= limit <= 1_000:
            raise InvalidLimit(f"limit must be between 1 and 1000, got {limit}")
        return await self.graph.affinities(
            user_id, now=time.time_ns() // 1_000, half_life_us=self.half_life_us, limit=limit
        )

    # -- suggestions --------------------------------------------------------------------------

    async def suggestions(self, user_id: str, limit: int) -> list[Suggestion]:
        validate_user_id(user_id)
        if not 1 <= limit <= SUGGESTIONS_KEPT:
            raise InvalidLimit(f"limit must be between 1 and {SUGGESTIONS_KEPT}, got {limit}")

        async def cached() -> list[Suggestion]:
            stored, generation = await self.cache.get(user_id)
            if stored is not None:
                return [_from_json(item) for item in stored]
            found = await self.compute(user_id)
            await self.cache.put(user_id, generation, [s.as_json() for s in found])
            return found

        found = await self._breaker.read("suggestions", cached, lambda: self.compute(user_id))
        return found[:limit]

    async def compute(self, user_id: str) -> list[Suggestion]:
        """Suggestions computed now (no cache)."""
        settings = self.settings
        rows = await self.graph.suggestions(
            user_id,
            now=time.time_ns() // 1_000,
            h=self.half_life_us,
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
            for uid in await self.graph.suggestable(user_id, popular):
                if len(found) == SUGGESTIONS_KEPT:
                    break
                found.append(Suggestion(uid, 0.0, 0, [], ["popular"]))
        return found

    async def _popular(self) -> list[str]:
        return await self._breaker.read(
            "popular", self._cached_popular, lambda: self.graph.popular(POPULAR_KEPT)
        )

    async def _cached_popular(self) -> list[str]:
        popular = await self.cache.popular()
        if popular is None:
            async with self._popular_lock:  # one scan per process when the list expires
                popular = await self.cache.popular()
                if popular is None:
                    popular = await self.graph.popular(POPULAR_KEPT)
                    await self.cache.put_popular(popular, self.settings.popular_cache_seconds)
        return popular

    async def dismiss(self, user_id: str, target_id: str) -> bool:
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        if user_id == target_id:
            raise InvalidInteraction(f"user {user_id!r} cannot dismiss itself")
        created = await self.graph.dismiss(user_id, target_id)
        try:
            await self.cache.invalidate(user_id)
        except MIRROR_DOWN as exc:  # committed; a stale cache entry lives SUGGEST_CACHE_SECONDS
            self._breaker.trip(exc)
        except RedisError:
            log.exception("suggestion cache invalidation failed after a dismiss")
        return created


def _from_json(item: dict) -> Suggestion:
    reasons = item["reasons"]
    return Suggestion(
        item["user_id"], item["score"], reasons["mutual_count"], reasons["via"], item["sources"]
    )
