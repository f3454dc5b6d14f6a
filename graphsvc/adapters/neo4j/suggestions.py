"""Interactions, affinity and suggestions in Neo4j: the exactly-once interaction apply, the
bounded suggestion query, the popular accounts of the cold start, and dismissals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import neo4j

from graphsvc.adapters.neo4j.store import Neo4jStore


class SuggestionStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def interactions_checkpoint(self) -> str:
        (row,) = await self._store.read("suggestions/interactions_checkpoint", {}, fresh=True)
        return row["last"]

    async def apply_interactions(
        self, pairs: Sequence[Mapping[str, Any]], *, checkpoint: str, last: str, half_life_us: int
    ) -> bool:
        """Add aggregated interactions once; False when another flush moved the checkpoint."""
        params = {"pairs": list(pairs), "checkpoint": checkpoint, "last": last, "h": half_life_us}
        (row,) = await self._store.write("suggestions/interactions_apply", params)
        return bool(row["applied"])

    async def affinities(
        self, user_id: str, *, now: int, half_life_us: int, limit: int
    ) -> list[tuple[str, float]]:
        params = {"id": user_id, "now": now, "h": half_life_us, "limit": limit}
        rows = await self._store.read("suggestions/affinities", params)
        return [(row["id"], row["affinity"]) for row in rows]

    async def suggestions(self, user_id: str, **params: Any) -> list[neo4j.Record]:
        return await self._store.read("suggestions/suggestions", {"id": user_id, **params})

    async def popular(self, limit: int) -> list[str]:
        rows = await self._store.read("suggestions/popular", {"limit": limit})
        return [row["id"] for row in rows]

    async def suggestable(self, user_id: str, candidates: Sequence[str]) -> list[str]:
        params = {"id": user_id, "ids": list(candidates)}
        (row,) = await self._store.read("suggestions/suggest_filter", params)
        return list(row["ids"])

    async def dismiss(self, user_id: str, target_id: str) -> bool:
        params = {"id": user_id, "target": target_id}
        (row,) = await self._store.write("suggestions/dismiss", params)
        return bool(row["created"])
