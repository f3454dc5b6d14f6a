"""Pages of lists: the limit rule, and cursors that bind a keyset position to one list.

Every list answers ``limit + 1`` entries when asked for ``limit``: the extra one says whether
another page exists, without counting. The cursor names the last entry served, signed for the
list's scope (``followers|alice``), so it can be neither edited nor replayed on another list.
A list read with a bound on the entries it examines (common lists: COMMON_SCAN_MAX) may stop
before it found them all: the page is then short, and its cursor names where the read
stopped, so a page never costs more than the bound, and the walk still sees every entry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from graphsvc.domain.cursor import CursorCodec, Position
from graphsvc.domain.errors import InvalidLimit
from graphsvc.domain.model import Entry, IdPage, IdSlice, Page
from graphsvc.settings import PageSettings

Fetch = Callable[[Position | None, int], Awaitable[list[Entry]]]
FetchIds = Callable[[str, int], Awaitable[IdSlice]]


class Positioned(Protocol):
    @property
    def position(self) -> Position: ...


P = TypeVar("P", bound=Positioned)


class Pager:
    def __init__(self, settings: PageSettings) -> None:
        self._codec = CursorCodec(settings.cursor_secret)
        self._default = settings.page_limit_default
        self._max = settings.page_limit_max

    def limit(self, limit: int | None) -> int:
        if limit is None:
            return min(self._default, self._max)
        if not 1 <= limit <= self._max:
            raise InvalidLimit(f"limit must be between 1 and {self._max}, got {limit}")
        return limit

    async def page(self, scope: str, limit: int | None, cursor: str | None, fetch: Fetch) -> Page:
        """A page of a list in (since, id) or (score, since, id) order."""
        return Page(*await self.walk(scope, limit, cursor, fetch))

    async def walk(
        self,
        scope: str,
        limit: int | None,
        cursor: str | None,
        fetch: Callable[[Position | None, int], Awaitable[list[P]]],
    ) -> tuple[list[P], str | None]:
        """A page of anything walked by its position, and the cursor after it (None: the
        last page)."""
        limit = self.limit(limit)
        after = self._codec.decode(scope, cursor) if cursor else None
        found = await fetch(after, limit + 1)
        items = found[:limit]
        more = len(found) > limit
        return items, self._codec.encode(scope, items[-1].position) if more else None

    async def id_page(
        self, scope: str, limit: int | None, cursor: str | None, fetch: FetchIds
    ) -> IdPage:
        """A page of a list in id order, with its total (exact, or a lower bound); short
        when the read stopped early, with a cursor where it stopped."""
        limit = self.limit(limit)
        after = self._codec.decode(scope, cursor).user_id if cursor else ""
        found = await fetch(after, limit + 1)
        ids = found.user_ids[:limit]
        resume = ids[-1] if len(found.user_ids) > limit else found.stopped_at
        next_cursor = self._codec.encode(scope, Position(0, resume)) if resume else None
        return IdPage(found.total, ids, next_cursor, total_is_lower_bound=not found.exact)
