"""Degrees of connection between two users (LinkedIn's 1st, 2nd, 3rd), over the follows the
viewer may see, by a bounded search from both ends (``domain.distance``): no request reads
more than DISTANCE_EDGES_MAX follows, whatever the degrees of the users on the way."""

from __future__ import annotations

from graphsvc.adapters.neo4j.pages import PageStore
from graphsvc.domain.distance import MAX_DISTANCE, Distance, Search
from graphsvc.domain.errors import SelfAction
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.privacy import Viewer
from graphsvc.settings import PageSettings


class Distances:
    def __init__(self, pages: PageStore, settings: PageSettings) -> None:
        self._pages = pages
        self._budget = settings.distance_edges_max

    async def distance(self, source: str, target: str, *, viewer: Viewer) -> Distance:
        """How many follows lead from ``source`` to ``target`` (1-3, or None: more), over
        the follows ``viewer`` may see."""
        validate_user_id(source, "user_id")
        validate_user_id(target, "target_id")
        if source == target:
            raise SelfAction(f"a distance is between two users, got {source!r} twice")
        search = Search(source, target, *await self._pages.distance_ends(source, target))
        read = 0
        while search.depth() < MAX_DISTANCE:
            forward = search.cost(True) <= search.cost(False)
            if read + search.cost(forward) > self._budget:
                return Distance(None, False, read)
            read += search.cost(forward)
            reached = await self._pages.step(
                search.frontier(forward),
                out=forward,
                reader=viewer.user_id,
                everyone=viewer.sees_all,
            )
            if not search.widen(forward, reached):
                return Distance(None, True, read)
            found = search.met()
            if found is not None:
                return Distance(found, True, read)
        return Distance(None, True, read)
