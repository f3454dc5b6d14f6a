"""Curated lists: create, rename, describe, make private or public, delete; add and remove
members in batches; read a list, an owner's lists (also only those holding one user), and a
list's members, newest first.

Policy: only the owner changes a list (its routes act as the owner). Every read is for a
viewer and answers only what ``domain/lists.may_see`` lets it see: another's private list, and
any list of an owner who blocks the viewer or is suspended, answer 404 ``list_not_found`` as
an unknown list does, and are left out of the owner's lists, so no answer tells that they
exist or whom they hold. The members of a list are never told they are in it.

Bounds: LIST_OWNER_MAX lists per owner and LIST_MEMBERS_MAX members per list, counted under
the owner's or the list's lock (409 ``list_limit`` / ``list_member_limit``); LIST_NAME_MAX and
LIST_DESCRIPTION_MAX characters (409 ``list_text_too_long``); LIST_BATCH_MAX members named by
one change (422 ``too_many_ids``). A refused change changes nothing. Every read is bounded by
them: a page of members examines at most LIST_MEMBERS_MAX memberships, a page of lists at most
LIST_OWNER_MAX lists.

Events: a change of a public list creates its outbox events in its transaction
(``cypher/lists.cypher``), appended to the event stream after the commit (by the relay when that
append is lost); a private list's changes create none.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import replace

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import (
    InvalidList,
    ListLimit,
    ListMemberLimit,
    ListNotFound,
    ListPurposeConflict,
    UserErasing,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.lists import (
    LIST_ID_LENGTH,
    CuratedList,
    ListBounds,
    MemberChange,
    Purpose,
    check_exclusive,
    clean_description,
    clean_name,
    list_not_found,
    may_see,
    member_ids,
    validate_list_id,
)
from graphsvc.domain.model import Entry, Page
from graphsvc.domain.privacy import Viewer
from graphsvc.domain.timeline import TimelinePage
from graphsvc.services.lists.events import append_events
from graphsvc.services.lists.exclusions import Exclusions
from graphsvc.services.lists.timelines import ListTimelines
from graphsvc.services.paging import Pager
from graphsvc.settings import ListSettings, PageSettings


def bounds_of(settings: ListSettings) -> ListBounds:
    return ListBounds(
        owner_max=settings.list_owner_max,
        members_max=settings.list_members_max,
        name_max=settings.list_name_max,
        description_max=settings.list_description_max,
        batch_max=settings.list_batch_max,
    )


def _erasing(owner: str) -> UserErasing:
    return UserErasing(f"user {owner!r} is being erased; its lists cannot change")


class Lists:
    def __init__(
        self,
        store: ListStore,
        timelines: ListTimelines,
        exclusions: Exclusions,
        stream: EventStream,
        settings: ListSettings,
        pages: PageSettings,
    ) -> None:
        self._store = store
        self._stream = stream
        self._timelines = timelines
        self._exclusions = exclusions
        self._bounds = bounds_of(settings)
        self._pager = Pager(pages)

    # -- the owner's changes ---------------------------------------------------------------

    async def create(
        self,
        owner: str,
        name: str,
        description: str,
        *,
        private: bool,
        purpose: Purpose,
        exclusive: bool = False,
    ) -> CuratedList:
        validate_user_id(owner)
        check_exclusive(purpose, exclusive)
        bounds = self._bounds
        new = CuratedList(
            id=secrets.token_hex(LIST_ID_LENGTH // 2),
            owner=owner,
            name=clean_name(name, bounds),
            description=clean_description(description, bounds),
            private=private,
            purpose=purpose,
            created=0,
            updated=0,
            members=0,
            exclusive=exclusive,
        )
        outcome, events = await self._store.create(new, bounds.owner_max)
        await append_events(self._stream, events)
        _raise_refusal(outcome, owner, new.id, bounds)
        assert isinstance(outcome, int)
        return replace(new, created=outcome, updated=outcome)

    async def update(
        self,
        owner: str,
        list_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        private: bool | None = None,
        exclusive: bool | None = None,
    ) -> CuratedList:
        """Rename, describe, make private or public, exclusive or not; the fields not given
        are kept."""
        _valid(owner, list_id)
        if name is None and description is None and private is None and exclusive is None:
            raise InvalidList(
                "name, description, private or exclusive: give at least one to change"
            )
        if (
            exclusive
            and (await self.get(owner, list_id, Viewer(owner))).purpose is not Purpose.CURATE
        ):
            raise ListPurposeConflict(f"list {list_id!r} is a moderation list: never exclusive")
        changed = await self._store.update(
            owner,
            list_id,
            name=None if name is None else clean_name(name, self._bounds),
            description=None
            if description is None
            else clean_description(description, self._bounds),
            private=private,
            exclusive=exclusive,
        )
        if changed is None:
            raise _not_found(owner, list_id)
        found, events = changed
        await append_events(self._stream, events)
        if exclusive is not None:
            await self._exclusions.changed(owner)
        return found

    async def delete(self, owner: str, list_id: str) -> bool:
        """Delete the list and its memberships; False when there was no such list."""
        _valid(owner, list_id)
        deleted, events = await self._store.delete(owner, list_id)
        await append_events(self._stream, events)
        if deleted:
            await self._timelines.deleted(list_id)
            await self._exclusions.changed(owner)
        return deleted

    async def change_members(
        self, owner: str, list_id: str, add: Sequence[str], remove: Sequence[str]
    ) -> MemberChange:
        """Add and remove members in one change, all or nothing (``domain/lists``)."""
        _valid(owner, list_id)
        adding, removing = member_ids(add, remove, self._bounds)
        most = self._bounds.members_max
        changed = await self._store.change_members(owner, list_id, adding, removing, most)
        if changed is None:
            raise _not_found(owner, list_id)
        outcome, events = changed
        await append_events(self._stream, events)
        _raise_refusal(outcome, owner, list_id, self._bounds)
        assert isinstance(outcome, MemberChange)
        if outcome.added or outcome.removed:
            await self._timelines.members_changed(list_id, outcome.added, outcome.removed)
            await self._exclusions.changed(owner)
        return outcome

    # -- reads for a viewer ------------------------------------------------------------------

    async def get(
        self, owner: str, list_id: str, viewer: Viewer, *, count: bool = True
    ) -> CuratedList:
        """The list, when the viewer may see it; else 404, as for an unknown list (``count``
        false: ``members`` is not counted, for the reads that only check the right)."""
        _valid(owner, list_id)
        found = await self._store.get(owner, list_id, viewer.user_id, count=count)
        if found is None:
            raise _not_found(owner, list_id)
        the_list, owner_active, blocked = found
        if not may_see(the_list, viewer, owner_active=owner_active, blocked=blocked):
            raise _not_found(owner, list_id)
        return the_list

    async def owned(
        self,
        owner: str,
        viewer: Viewer,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        member: str | None = None,
    ) -> tuple[list[CuratedList], str | None]:
        """The owner's lists the viewer may see, newest first; with ``member``, only those
        that hold that user (for the owner: which of my lists hold X)."""
        validate_user_id(owner)
        if member is not None:
            validate_user_id(member, "member")
        everything = viewer.is_owner(owner)
        # the owner's walk and another's are two scopes: a cursor of one is refused by the other
        scope = f"lists|{owner}|{member or ''}|{'all' if everything else 'public'}"

        async def fetch(after: Position | None, wanted: int) -> list[CuratedList]:
            return await self._store.owned_page(
                owner,
                everything=everything,
                viewer=viewer.user_id,
                member=member,
                after=after,
                limit=wanted,
            )

        return await self._pager.walk(scope, limit, cursor, fetch)

    async def members(
        self,
        owner: str,
        list_id: str,
        viewer: Viewer,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        """The list's active members, newest first, when the viewer may see the list."""
        await self.get(owner, list_id, viewer, count=False)  # its 404; the page checks again
        everything = viewer.is_owner(owner)

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._store.members_page(
                owner,
                list_id,
                everything=everything,
                viewer=viewer.user_id,
                after=after,
                limit=wanted,
            )

        return await self._pager.page(f"members|{list_id}", limit, cursor, fetch)

    async def timeline(
        self,
        owner: str,
        list_id: str,
        viewer: Viewer,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TimelinePage:
        """The list's members' posts, newest first, when the viewer may see it."""
        _valid(owner, list_id)
        return await self._timelines.timeline(owner, list_id, viewer, limit, cursor)


def _raise_refusal(outcome: object, owner: str, list_id: str, bounds: ListBounds) -> None:
    """The error of the rule that refused a change (a refused change changed nothing)."""
    if outcome == "erasing":
        raise _erasing(owner)
    if outcome == "list_limit":
        raise ListLimit(f"user {owner!r} owns LIST_OWNER_MAX = {bounds.owner_max} lists")
    if outcome == "list_member_limit":
        raise ListMemberLimit(
            f"the change would leave more than LIST_MEMBERS_MAX = {bounds.members_max} "
            f"members in list {list_id!r}; nothing changed"
        )


def _valid(owner: str, list_id: str) -> None:
    validate_user_id(owner)
    validate_list_id(list_id)


def _not_found(owner: str, list_id: str) -> ListNotFound:
    return list_not_found(owner, list_id)
