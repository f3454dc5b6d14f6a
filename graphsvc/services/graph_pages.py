"""Lists the graph itself answers: friends (closest first), common following and followers of
two users, familiar followers, a user's own blocks; each a bounded Cypher query.

Common lists examine at most COMMON_SCAN_MAX entries of the shorter list per request: the
total is exact up to that size and a lower bound beyond (``total_is_lower_bound``), and a page
that examined that many without filling up is answered short, with a cursor where it stopped.
Each is read for a viewer: it refuses (403 ``network_hidden``) when a list it is derived from
is hidden from the viewer, and familiar followers name only people whose following the viewer
may see (``privacy``).

The mirror does not answer them: its hot lists hold only each user's newest HOT_LIST_CAP
entries, ordered by time, where common lists are whole lists in id order, and ZINTER reads
both sorted sets whole on every page (O(N·K) + O(M·log M), in a Redis that serves nobody else
meanwhile). The id-ordered indexes give each page in bounded work instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.adapters.neo4j.pages import PageStore
from graphsvc.domain.affinity import AFFINITY_REFERENCE_US
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import SelfAction, TooManyIds
from graphsvc.domain.ids import validate_user_id, validate_user_ids
from graphsvc.domain.model import Entry, Familiar, IdPage, IdSlice, Page, Side
from graphsvc.domain.privacy import EVERYONE, Viewer, require_owner
from graphsvc.services.paging import Pager
from graphsvc.services.privacy import PrivacyRules
from graphsvc.settings import InteractionSettings, PageSettings


class GraphPages:
    def __init__(
        self,
        pages: PageStore,
        privacy: PrivacyRules,
        settings: PageSettings,
        interactions: InteractionSettings,
    ) -> None:
        self._pages = pages
        self._privacy = privacy
        self._settings = settings
        self._pager = Pager(settings)
        self._half_life_us = interactions.affinity_half_life_us

    async def friends(
        self,
        user_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        viewer: Viewer = EVERYONE,
    ) -> Page:
        """Active mutual follows, closest first: by affinity, then the newest follow. Each is
        in both of the user's lists, so the viewer must see both."""
        validate_user_id(user_id)
        await self._privacy.check_answer(
            [(user_id, Side.FOLLOWERS), (user_id, Side.FOLLOWING)], viewer
        )

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._pages.friends_page(
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
            return await self._pages.blocks_page(user_id, after, wanted)

        return await self._pager.page(f"blocks|{user_id}", limit, cursor, fetch)

    async def common_following(
        self,
        user_id: str,
        other_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        viewer: Viewer = EVERYONE,
    ) -> IdPage:
        """Active users both follow, in id order, with the total (a lower bound past
        COMMON_SCAN_MAX followings of the one who follows fewer). The viewer must see both
        users' following."""
        _valid_pair(user_id, other_id)
        self._pager.limit(limit)  # a bad limit is named before "the same user twice", as ever
        _two_users(user_id, other_id)
        reads = [(user_id, Side.FOLLOWING), (other_id, Side.FOLLOWING)]
        await self._privacy.check_answer(reads, viewer)
        return await self._common(
            "pages/common_following", "common_following", user_id, other_id, limit, cursor
        )

    async def common_followers(
        self,
        user_id: str,
        other_id: str,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        viewer: Viewer = EVERYONE,
    ) -> IdPage:
        """Active users who follow both, in id order, with the total (a lower bound past
        COMMON_SCAN_MAX followers of the one with fewer).

        The followers of the one with fewer are walked in id order from the cursor, and each
        tested for an edge to the other user (one index seek each): the bigger list is never
        read, and no page examines more than COMMON_SCAN_MAX followers. The viewer must see
        both users' followers."""
        _valid_pair(user_id, other_id)
        _two_users(user_id, other_id)
        reads = [(user_id, Side.FOLLOWERS), (other_id, Side.FOLLOWERS)]
        await self._privacy.check_answer(reads, viewer)
        return await self._common(
            "pages/common_followers", "common_followers", user_id, other_id, limit, cursor
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
            return await self._pages.common(name, user_id, other_id, after, wanted, scan=scan)

        return await self._pager.id_page(f"{scope}|{user_id}|{other_id}", limit, cursor, fetch)

    async def familiar_followers(
        self, viewer_id: str, target_id: str, limit: int | None = None, *, viewer: Viewer = EVERYONE
    ) -> IdPage:
        """Active users ``viewer_id`` follows who follow the target, newest follow first.

        ``viewer`` is who reads the answer (``viewer_id``'s own view, usually): it must see
        ``viewer_id``'s following and the target's followers (the answer is read from both),
        and each name is of someone whose following it may see (the query's rule), since
        each says "this one follows the target"."""
        validate_user_id(viewer_id, "viewer_id")
        validate_user_id(target_id, "target_id")
        limit = self._pager.limit(limit)
        reads = [(viewer_id, Side.FOLLOWING), (target_id, Side.FOLLOWERS)]
        await self._privacy.check_answer(reads, viewer)
        params = {
            "viewer": viewer_id,
            "target": target_id,
            "reader": viewer.user_id,
            "everyone": viewer.sees_all,
        }
        total, ids = await self._pages.id_page("pages/familiar_followers", params, "", limit)
        return IdPage(total, ids)

    async def familiar_followers_many(
        self, viewer_id: str, targets: Sequence[str], *, viewer: Viewer = EVERYONE
    ) -> list[Familiar]:
        """For each target (1 to FAMILIAR_MAX_IDS, each once, in the order given), the active
        users ``viewer_id`` follows who follow it: a count and the first FAMILIAR_SHOWN_MAX.

        The viewer must see ``viewer_id``'s following (else the whole answer is refused, as
        for one target); a target whose followers are hidden from it is answered with no
        count, rather than refusing the rest. Names as ``familiar_followers`` gives them."""
        validate_user_id(viewer_id, "user_id")
        most = self._settings.familiar_max_ids
        if not 1 <= len(targets) <= most:
            raise TooManyIds(f"ids must name 1 to {most} users, got {len(targets)}")
        validate_user_ids(targets, "ids item")
        wanted = list(dict.fromkeys(targets))
        lists = [(viewer_id, Side.FOLLOWING)] + [(t, Side.FOLLOWERS) for t in wanted]
        hidden = await self._privacy.hidden_among(lists, viewer)  # one settings read for all
        refusal = hidden.get((viewer_id, Side.FOLLOWING.label))
        if refusal is not None:
            raise refusal.hidden()
        shown = {t for t in wanted if (t, Side.FOLLOWERS.label) not in hidden}
        found = await self._pages.familiar_many(
            viewer_id,
            [t for t in wanted if t in shown],
            reader=viewer.user_id,
            everyone=viewer.sees_all,
            limit=self._settings.familiar_shown_max,
        )
        return [
            Familiar(t, None, []) if t not in shown else found.get(t, Familiar(t, 0, []))
            for t in wanted
        ]


def _valid_pair(user_id: str, other_id: str) -> None:
    validate_user_id(user_id, "user_id")
    validate_user_id(other_id, "other_id")


def _two_users(user_id: str, other_id: str) -> None:
    if user_id == other_id:
        raise SelfAction(f"common lists compare two different users, got {user_id!r} twice")
