"""Interactions, affinity and suggestions in Neo4j: the exactly-once interaction apply, the
bounded candidate queries (with the ranker's features), the filter of the cold start's fills,
dismissals, and the training reads of the ranker (long jobs' statements:
NEO4J_JOB_TIMEOUT_SECONDS each; its models: ``ranker_models``)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import neo4j

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.privacy import HIDDEN_DEGREE

# The columns of each candidate row of the query suggestions/candidates, in its order.
CANDIDATE_COLUMNS = (
    "id",
    "sources",
    "paths",
    "ra",
    "aa",
    "affinity_ra",
    "fresh",
    "cof",
    "cof_paths",
    "follows_you",
    "follower_affinity",
    "walk",
    "followers",
    "follows",
    "active",
    "vias",
    "counts_hidden",
)


@dataclass(frozen=True, slots=True)
class AppliedInteractions:
    """What one flush did: whether it applied, and the pairs (actor, target, day) it dropped
    for a user not in the graph or being erased, and those the daily cap cut."""

    applied: bool
    unknown: int = 0
    erasing: int = 0
    capped: int = 0


class SuggestionStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    @property
    def timeout(self) -> float:
        """How long a request's statement may take (what waiting for plans may take too)."""
        return self._store.timeout

    def prepared_by(self, warm_up: WarmUp) -> None:
        """``warm_up`` is done again once Neo4j was lost (what it planned may be gone)."""
        self._store.warm_ups.append(warm_up)

    async def interactions_checkpoint(self) -> str:
        (row,) = await self._store.read("suggestions/interactions_checkpoint", {}, fresh=True)
        return row["last"]

    async def apply_interactions(
        self,
        pairs: Sequence[Mapping[str, Any]],
        *,
        checkpoint: str,
        last: str,
        half_life_us: int,
        daily_max: float,
    ) -> AppliedInteractions:
        """Add aggregated interactions once (``applied`` False when another flush moved the
        checkpoint), with the pairs dropped and capped."""
        params = {
            "pairs": list(pairs),
            "checkpoint": checkpoint,
            "last": last,
            "h": half_life_us,
            "daily_max": daily_max,
        }
        (row,) = await self._store.write("suggestions/interactions_apply", params)
        return AppliedInteractions(
            bool(row["applied"]), int(row["unknown"]), int(row["erasing"]), int(row["capped"])
        )

    async def affinities(
        self, user_id: str, *, now: int, half_life_us: int, limit: int
    ) -> list[tuple[str, float]]:
        params = {"id": user_id, "now": now, "h": half_life_us, "limit": limit}
        rows = await self._store.read("suggestions/affinities", params)
        return [(row["id"], row["affinity"]) for row in rows]

    async def candidates(
        self, user_id: str, *, job: bool = False, **params: Any
    ) -> list[dict[str, Any]]:
        """Every candidate as a dict of CANDIDATE_COLUMNS (``job``: a training's read, under
        the long jobs' timeout)."""
        params = {"id": user_id, "hidden_degree": HIDDEN_DEGREE, **params}
        records = await self._store.read("suggestions/candidates", params, job=job)
        rows = records[0]["rows"] if records else []
        return [dict(zip(CANDIDATE_COLUMNS, row, strict=True)) for row in rows]

    async def following_count(self, user_id: str, *, job: bool = False) -> int:
        (row,) = await self._store.read("suggestions/following_count", {"id": user_id}, job=job)
        return int(row["following"])

    async def three_hop(
        self, user_id: str, *, job: bool = False, **params: Any
    ) -> list[neo4j.Record]:
        params = {"id": user_id, "hidden_degree": HIDDEN_DEGREE, **params}
        return await self._store.read("suggestions/three_hop", params, job=job)

    async def edge_count(self) -> int:
        """How many follow edges the graph holds (O(1): the training's growth trigger)."""
        (row,) = await self._store.read("suggestions/edge_count", {})
        return int(row["edges"])

    async def holdout_cutoff(self, share: float) -> tuple[int, int | None, int, int]:
        """How many edges there are, the time from which the newest ``share`` were made, how
        many distinct times those newest edges have, and how many steps between consecutive
        distinct times are one microsecond (a load's clock for rows without times)."""
        (row,) = await self._store.read("suggestions/edge_count", {}, job=True)
        edges = int(row["edges"])
        count = max(1, math.ceil(edges * share))
        (row,) = await self._store.read("suggestions/holdout_cutoff", {"count": count}, job=True)
        return edges, row["cutoff"], int(row["times"]), int(row["steps"])

    async def holdout_page(
        self, cutoff: int, after: tuple[int, str, str] | None, limit: int
    ) -> list[tuple[int, str, str, bool]]:
        """Up to ``limit`` follows made from ``cutoff`` on, after the position ``after``
        (since, src, dst), in that order: (since, src, dst, whether it is a follow-back)."""
        since, src, dst = after if after is not None else (None, "", "")
        params = {"cutoff": cutoff, "since": since, "src": src, "dst": dst, "limit": limit}
        rows = await self._store.read("suggestions/holdout_newest", params, job=True)
        return [(row["since"], row["src"], row["dst"], bool(row["back"])) for row in rows]

    async def holdout_users(self, user_ids: Sequence[str], cutoff: int) -> set[str]:
        """The users among ``user_ids`` a model can learn from: active, with follows made
        before ``cutoff``."""
        params = {"ids": list(user_ids), "cutoff": cutoff}
        rows = await self._store.read("suggestions/holdout_users", params, job=True)
        return {row["id"] for row in rows}

    async def active_users(self, min_following: int) -> list[str]:
        rows = await self._store.read("suggestions/active_users", {"min": min_following}, job=True)
        return [row["id"] for row in rows]

    async def followings_of(
        self, user_ids: Sequence[str]
    ) -> dict[str, list[tuple[str, bool, bool]]]:
        """Whom each user follows, each with whether the follow is one half of a friendship
        (followed back since the same moment) and whether it is followed back at all."""
        rows = await self._store.read(
            "suggestions/followings_of", {"ids": list(user_ids)}, job=True
        )
        return {
            row["id"]: [(uid, bool(friend), bool(back)) for uid, friend, back in row["following"]]
            for row in rows
        }

    async def follows_page(
        self, before: int | None, after: tuple[int, str, str] | None, limit: int
    ) -> list[tuple[str, str, int]]:
        """Up to ``limit`` follows made before ``before`` (None: all), after the position
        ``after`` (since, src, dst), in that order: (src, dst, since)."""
        since, src, dst = after if after is not None else (None, "", "")
        params = {"before": before, "since": since, "src": src, "dst": dst, "limit": limit}
        rows = await self._store.read("suggestions/follows_page", params, job=True)
        return [(row["src"], row["dst"], row["since"]) for row in rows]

    async def suggestable(self, user_id: str, candidates: Sequence[str]) -> list[str]:
        params = {"id": user_id, "ids": list(candidates), "now": time.time_ns() // 1_000}
        (row,) = await self._store.read("suggestions/suggest_filter", params)
        return list(row["ids"])

    async def exclusion(self, user_id: str, target_id: str, now: int) -> str | None:
        """The first rule that keeps the target out of the user's suggestions (None: none)."""
        params = {"id": user_id, "target": target_id, "now": now}
        (row,) = await self._store.read("suggestions/exclusion", params)
        return row["excluded"]

    async def dismiss(self, user_id: str, target_id: str) -> tuple[bool, str | None]:
        """(whether the dismissal is new, the rule that refused it: None, 'unknown_target' or
        'erasing')."""
        params = {"id": user_id, "target": target_id}
        (row,) = await self._store.write("suggestions/dismiss", params)
        return bool(row["created"]), row["refused"]
