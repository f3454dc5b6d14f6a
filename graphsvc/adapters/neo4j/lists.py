"""Curated lists in Neo4j (``cypher/lists.cypher``): a list's writes, each under the lock of
the node it changes; the reads of one list, of an owner's lists and of a list's members; and
the deletion of an erased owner's lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphsvc.adapters.neo4j.pages import keyset_page, keyset_position
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.domain.cursor import Position
from graphsvc.domain.lists import CuratedList, MemberChange, Purpose
from graphsvc.domain.model import Entry, GraphEvent


def list_from_row(row: Mapping[str, Any]) -> CuratedList:
    return CuratedList(
        id=row["id"],
        owner=row["owner"],
        name=row["name"],
        description=row["description"],
        private=bool(row["private"]),
        purpose=Purpose(row["purpose"]),
        created=int(row["created"]),
        updated=int(row["updated"]),
        members=int(row["members"]),
        exclusive=bool(row["exclusive"]),
    )


def events_from(maps: Sequence[Mapping[str, Any]], owner: str, list_id: str) -> list[GraphEvent]:
    """The outbox events a list write created, as it returned them."""
    return [
        GraphEvent(
            e["id"],
            e["type"],
            e.get("src") or owner,
            e["dst"],
            int(e["v"]),
            list=e.get("list") or list_id,
        )
        for e in maps
    ]


class ListStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def create(self, new: CuratedList, most: int) -> tuple[int | str, list[GraphEvent]]:
        """The list's creation time (µs), or the rule that refused it ('erasing',
        'list_limit'); and its events."""
        params = {
            "owner": new.owner,
            "id": new.id,
            "name": new.name,
            "description": new.description,
            "private": new.private,
            "purpose": new.purpose.value,
            "exclusive": new.exclusive,
            "max": most,
        }
        (row,) = await self._store.write("lists/create", params)
        events = events_from(row["events"], new.owner, new.id)
        if row["refused"] is not None:
            return str(row["refused"]), events
        return int(row["created"]), events

    async def get(
        self, owner: str, list_id: str, viewer: str | None, *, count: bool = True
    ) -> tuple[CuratedList, bool, bool] | None:
        """(the list, whether its owner is active, whether the owner blocks ``viewer``), or
        None when the owner has no such list; ``count`` false: its members not counted (0),
        an O(1) read."""
        params = {"owner": owner, "id": list_id, "viewer": viewer or "", "count": count}
        rows = await self._store.read("lists/get", params)
        if not rows:
            return None
        row = rows[0]
        return list_from_row(row), bool(row["owner_active"]), bool(row["blocks_viewer"])

    async def owned_page(
        self,
        owner: str,
        *,
        everything: bool,
        viewer: str | None,
        member: str | None,
        after: Position | None,
        limit: int,
    ) -> list[CuratedList]:
        params = {
            "owner": owner,
            "all": everything,
            "viewer": viewer or "",
            "member": member or "",
            "limit": limit,
            **keyset_position(after),
        }
        return [list_from_row(row) for row in await self._store.read("lists/owned_page", params)]

    async def update(
        self,
        owner: str,
        list_id: str,
        *,
        name: str | None,
        description: str | None,
        private: bool | None,
        exclusive: bool | None,
    ) -> tuple[CuratedList, list[GraphEvent]] | None:
        params = {
            "owner": owner,
            "id": list_id,
            "name": name,
            "description": description,
            "private": private,
            "exclusive": exclusive,
        }
        rows = await self._store.write("lists/update", params)
        if not rows:
            return None
        return list_from_row(rows[0]), events_from(rows[0]["events"], owner, list_id)

    async def delete(self, owner: str, list_id: str) -> tuple[bool, list[GraphEvent]]:
        (row,) = await self._store.write("lists/delete", {"owner": owner, "id": list_id})
        return bool(row["deleted"]), events_from(row["events"], owner, list_id)

    async def change_members(
        self, owner: str, list_id: str, add: Sequence[str], remove: Sequence[str], most: int
    ) -> tuple[MemberChange | str, list[GraphEvent]] | None:
        """What the change did, the rule that refused it all ('erasing',
        'list_member_limit'), or None when the owner has no such list."""
        params = {"owner": owner, "id": list_id, "add": list(add), "remove": list(remove)}
        rows = await self._store.write("lists/change_members", {**params, "max": most})
        if not rows:
            return None
        row = rows[0]
        if row["refused"] is not None:
            return str(row["refused"]), []
        change = MemberChange(
            added=list(row["added"]),
            removed=list(row["removed"]),
            refused={user: reason for user, reason in row["skipped"]},
            members=int(row["members"]),
        )
        return change, events_from(row["events"], owner, list_id)

    async def members_page(
        self,
        owner: str,
        list_id: str,
        *,
        everything: bool,
        viewer: str | None,
        after: Position | None,
        limit: int,
    ) -> list[Entry]:
        """The members, newest first, of a list ``viewer`` may read (``everything``: the
        owner's own read); none when it may not."""
        params = {"owner": owner, "all": everything, "viewer": viewer or ""}
        return await keyset_page(self._store, "lists/members_page", list_id, after, limit, params)

    async def member_ids(self, owner: str, list_id: str) -> list[str]:
        """Every active member of the list, newest first (at most LIST_MEMBERS_MAX)."""
        rows = await self._store.read("lists/member_ids", {"owner": owner, "id": list_id})
        return [row["id"] for row in rows]

    async def timeline_authors(
        self,
        owner: str,
        list_id: str,
        *,
        everything: bool,
        viewer: str | None,
        authors: Sequence[str],
    ) -> tuple[Purpose | None, set[str]]:
        """The list's purpose when the viewer may read it (else None), and which of these
        authors its timeline may show the viewer."""
        params = {
            "owner": owner,
            "id": list_id,
            "all": everything,
            "viewer": viewer or "",
            "authors": list(authors),
        }
        (row,) = await self._store.read("lists/timeline_authors", params)
        purpose = Purpose(row["purpose"]) if row["visible"] else None
        return purpose, set(row["authors"])

    async def exclusive_members(self, owner: str) -> list[str]:
        (row,) = await self._store.read("lists/exclusive_members", {"owner": owner})
        return list(row["ids"])

    async def leave_blocked(self, pairs: Sequence[tuple[str, str]]) -> list[GraphEvent]:
        """What blocks (blocker, blocked) do to lists (``lists/leave_blocked``); the events of
        the members that left public lists."""
        if not pairs:
            return []
        (row,) = await self._store.write("lists/leave_blocked", {"pairs": [list(p) for p in pairs]})
        return events_from([e for events in row["events"] for e in events], "", "")

    async def erase_owned(self, user_id: str, batch: int) -> tuple[int, list[str]]:
        """Delete one batch of an erased user's lists and their memberships; how many went,
        and the ids of the lists that went."""
        params = {"id": user_id, "batch": batch}
        (row,) = await self._store.write("lists/erase_owned", params)
        return int(row["deleted"]), list(row["lists"])
