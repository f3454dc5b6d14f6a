"""List follows: a user follows a curate list it may see, to read its timeline
(``services/lists/timelines.py``: every follower reads the list's one timeline). A follow is the
follower's alone; a list the follower may no longer see is left out of its follows, and a
block between the two ends the follow (``workers/list_events.py``)."""

from __future__ import annotations

from graphsvc.adapters.neo4j.list_follows import ListFollowStore
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import (
    ListFollowLimit,
    ListNotFound,
    ListPurposeConflict,
    UserErasing,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.lists import FollowedList, validate_list_id
from graphsvc.services.paging import Pager
from graphsvc.settings import ListSettings, PageSettings


class ListFollows:
    def __init__(self, store: ListFollowStore, settings: ListSettings, pages: PageSettings) -> None:
        self._store = store
        self._most = settings.list_follows_max
        self._pager = Pager(pages)

    async def follow(self, user_id: str, list_id: str) -> bool:
        """Follow the list; whether the follow is new."""
        validate_user_id(user_id)
        validate_list_id(list_id)
        refused, created = await self._store.follow(user_id, list_id, self._most)
        if refused == "not_found":
            raise ListNotFound(f"no list {list_id!r} this viewer may see")
        if refused == "moderation":
            raise ListPurposeConflict(
                f"list {list_id!r} is a moderation list: subscribe to it; only a curate list "
                "is followed"
            )
        if refused == "erasing":
            raise UserErasing(f"user {user_id!r} is being erased")
        if refused == "list_follow_limit":
            raise ListFollowLimit(f"user {user_id!r} follows LIST_FOLLOWS_MAX = {self._most} lists")
        return created

    async def unfollow(self, user_id: str, list_id: str) -> bool:
        validate_user_id(user_id)
        validate_list_id(list_id)
        return await self._store.unfollow(user_id, list_id)

    async def followed(
        self, user_id: str, limit: int | None, cursor: str | None
    ) -> tuple[list[FollowedList], str | None]:
        """The lists the user follows and may see, newest follow first."""
        validate_user_id(user_id)

        async def fetch(after: Position | None, wanted: int) -> list[FollowedList]:
            return await self._store.page(user_id, after, wanted)

        return await self._pager.walk(f"list-follows|{user_id}", limit, cursor, fetch)
