"""Whether the two stores answer. Neo4j is required (nothing can be written without it);
Redis is not (reads are then served from Neo4j)."""

from __future__ import annotations

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.mirror import Mirror


class Health:
    def __init__(self, store: Neo4jStore, mirror: Mirror) -> None:
        self._store = store
        self._mirror = mirror

    async def check(self) -> dict[str, str]:
        """``{"neo4j": "ok", "redis": "ok" | "unavailable"}``; raises when Neo4j is down."""
        await self._store.verify()
        try:
            await self._mirror.ping()
        except REDIS_DOWN:
            return {"neo4j": "ok", "redis": "unavailable"}
        return {"neo4j": "ok", "redis": "ok"}
