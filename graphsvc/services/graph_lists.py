"""Lists the graph itself answers: friends (closest first), common following and followers of
two users, familiar followers, a user's own blocks; each a bounded Cypher query.

Common lists examine at most COMMON_SCAN_MAX entries of the shorter list per request: the
total is exact up to that size and a lower bound beyond (``total_is_lower_bound``), and a page
that examined that many without filling up is answered short, with a cursor where it stopped.
The mirror does not answer them: its hot lists hold only each user's newest HOT_LIST_CAP
entries, ordered by time, where common lists are whole lists in id order, and ZINTER reads
both sorted sets whole on every page (O(N·K) + O(M·log M), in a Redis that serves nobody else
meanwhile). The id-ordered indexes give each page in bounded work instead.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.domain.affinity import AFFINITY_REFERENCE_US
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import SelfAction
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Entry, IdPage, IdSlice, Page
from graphsvc.domain.privacy import Viewer, require_owner
from graphsvc.services.paging import Pager
from graphsvc.settings import InteractionSettings, ListSettings


class GraphLists:
    def __init__(
        self, lists: ListStore, settings: ListSettings, interactions: InteractionSettings
    ) -> None:
        self._lists = lists
        self._settings = settings
        self._pager = Pager(settings)
        self._half_life_us = interactions.affinity_half_life_us

    async def friends(
        self, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        """Active mutual follows, closest first: by affinity, then the newest follow."""
        validate_user_id(user_id)

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._lists.friends_page(
                user_id,
                after,
                wanted,
                ref=AFFINITY_REFERENCE_US,
                half_life_us=self._half_life_us,
            )

        return await self._pager.page(f"friends|{user_id}", limit, cursor, fetch)

    async def blocks(
        self, user_id: str, limit: int | None = None, cursor: str | None = None, *, viewer: Viewer
    ) -> Page:
        """Whom the user blocks, newest block first. Its owner's alone (or a key that sees
        everything): who blocks whom is never shown to anyone else, the blocked least of all."""
        validate_user_id(user_id)
        require_owner(viewer, user_id, "blocks")

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._lists.blocks_page(user_id, after, wanted)

        return await self._pager.page(f"blocks|{user_id}", limit, cursor, fetch)

    async def common_following(
        self, user_id: str, other_id: str, limit: int | None = None, cursor: str | None = None
    ) -> IdPage:
        """Active users both follow, in id order, with the total (a lower bound past
        COMMON_SCAN_MAX followings of the one who follows fewer)."""
        _valid_pair(user_id, other_id)
        self._pager.limit(limit)  # a bad limit is named before "the same user twice", as ever
        _two_users(user_id, other_id)
        return await self._common(
            "lists/common_following", "common_following", user_id, other_id, limit, cursor
        )

    async def common_followers(
        self, user_id: str, other_id: str, limit: int | None = None, cursor: str | None = None
    ) -> IdPage:
        """Active users who follow both, in id order, with the total (a lower bound past
        COMMON_SCAN_MAX followers of the one with fewer).

        The followers of the one with fewer are walked in id order from the cursor, and each
        tested for an edge to the other user (one index seek each): the bigger list is never
        read, and no page examines more than COMMON_SCAN_MAX followers."""
        _valid_pair(user_id, other_id)
        _two_users(user_id, other_id)
        return await self._common(
            "lists/common_followers", "common_followers", user_id, other_id, limit, cursor
        )

    async def _common(
        self,
        name: str,
        scope: str,
        user_id: str,
        other_id: str,
        limit: int | None,
        cursor: str | None,
    ) -> IdPage:
        scan = self._settings.common_scan_max

        async def fetch(after: str, wanted: int) -> IdSlice:
            return await self._lists.common(name, user_id, other_id, after, wanted, scan=scan)

        return await self._pager.id_page(f"{scope}|{user_id}|{other_id}", limit, cursor, fetch)

    async def familiar_followers(
        self, viewer_id: str, target_id: str, limit: int | None = None
    ) -> IdPage:
        """Active users the viewer follows who follow the target, newest follow first."""
        validate_user_id(viewer_id, "viewer_id")
        validate_user_id(target_id, "target_id")
        limit = self._pager.limit(limit)
        total, ids = await self._lists.id_page(
            "lists/familiar_followers", {"viewer": viewer_id, "target": target_id}, "", limit
        )
        return IdPage(total, ids)


def _valid_pair(user_id: str, other_id: str) -> None:
    validate_user_id(user_id, "user_id")
    validate_user_id(other_id, "other_id")


def _two_users(user_id: str, other_id: str) -> None:
    if user_id == other_id:
        raise SelfAction(f"common lists compare two different users, got {user_id!r} twice")
