"""API key records in Neo4j, the truth every API process reads them from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.access import ApiKey, Scope


def _key(row: Any) -> ApiKey:
    return ApiKey(
        id=row["id"],
        digest=row["digest"],
        scopes=frozenset(Scope(s) for s in row["scopes"]),
        user=row["user"],
        name=row["name"],
        created=int(row["created"]),
        revoked=bool(row["revoked"]),
    )


class KeyStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def create(self, key: ApiKey) -> bool:
        """Store the key; False (nothing stored) when its user is being erased."""
        params = {
            "id": key.id,
            "digest": key.digest,
            "scopes": sorted(s.value for s in key.scopes),
            "user": key.user,
            "name": key.name,
            "created": key.created,
        }
        return bool(await self._store.write("keys/create", params))

    async def find(self, key_id: str) -> ApiKey | None:
        rows = await self._store.read("keys/find", {"id": key_id}, fresh=True)
        return _key(rows[0]) if rows else None

    async def list(self) -> Sequence[ApiKey]:
        return [_key(row) for row in await self._store.read("keys/list", {}, fresh=True)]

    async def revoke(self, key_id: str) -> bool | None:
        """True when revoked now, False when it already was, None when unknown."""
        rows = await self._store.write("keys/revoke", {"id": key_id})
        return (not rows[0]["was_revoked"]) if rows else None
