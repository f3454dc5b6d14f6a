"""The cold start in Neo4j: which accounts may be listed as trending or popular (the workers'
bounded check), the scan that builds the popular chart (a worker's long job), and the
accounts similar to a seed."""

from __future__ import annotations

import time
from collections.abc import Sequence

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.privacy import HIDDEN_DEGREE
from graphsvc.domain.similar import SimilarAccount


class ColdStartStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def listable(self, user_ids: Sequence[str]) -> dict[str, int]:
        """Those of these users that may be listed, with their follower counts."""
        if not user_ids:
            return {}
        rows = await self._store.read("cold_start/listable", {"ids": list(user_ids)})
        return {row["id"]: int(row["followers"]) for row in rows}

    async def popular_scan(self, limit: int) -> list[tuple[str, int]]:
        """The ``limit`` most followed users that may be listed (every user read: a job)."""
        rows = await self._store.read("cold_start/popular_scan", {"limit": limit}, job=True)
        return [(row["id"], int(row["followers"])) for row in rows]

    async def similar(
        self, user_id: str, seed_id: str, *, followers: int, follows: int, limit: int
    ) -> list[SimilarAccount] | None:
        """The accounts similar to the seed for this user, best first; None when the seed
        is not a user of the graph."""
        params = {
            "id": user_id,
            "seed": seed_id,
            "followers": followers,
            "follows": follows,
            "limit": limit,
            "now": time.time_ns() // 1_000,
            "hidden_degree": HIDDEN_DEGREE,
        }
        (row,) = await self._store.read("cold_start/similar", params)
        if not row["known"]:
            return None
        return [
            SimilarAccount(uid, float(score), seed_id, int(shared))
            for uid, score, shared in row["rows"]
        ]
