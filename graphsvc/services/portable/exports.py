"""Exports: a user's follows, blocks, mutes or lists in one answer, as its own lists show them
(suspended and spam users left out), newest first. The user's alone: the options of its
follows, its blocks and mutes, and its private lists are its private view."""

from __future__ import annotations

from graphsvc.adapters.neo4j.portable import PortableStore
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.portable import Entry, Kind
from graphsvc.settings import ListSettings, WriteSettings


class Exports:
    def __init__(self, store: PortableStore, writes: WriteSettings, lists: ListSettings) -> None:
        self._store = store
        self._most = {
            Kind.FOLLOWING: writes.max_following,
            Kind.BLOCKS: writes.max_blocks,
            Kind.MUTES: writes.max_mutes,
            Kind.LISTS: lists.list_owner_max * lists.list_members_max,
        }

    async def entries(self, user_id: str, kind: Kind) -> list[Entry]:
        """Every entry of this kind (bounded by its limit: MAX_FOLLOWING follows, ...)."""
        validate_user_id(user_id)
        return await self._store.entries(kind, user_id, self._most[kind])
