# Generated from graphsvc/client/_async/listing.py by `make generate`: edit that file.
"""A paged list, walked for you: iterate it for every item across pages (``next_cursor``
followed), ``pages()`` for a page at a time, ``limit`` to stop early, ``progress`` for a
progress bar with the list's length, ``to_pandas()`` for a DataFrame (pandas imported on
first use). The blocking ``Listing`` is generated from this file, as the blocking client is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Generic

from graphsvc.client._walk import Fetch, ItemT, Page, PageT_co, Total, Walk, rows

if TYPE_CHECKING:
    import pandas


class Listing(Generic[PageT_co]):
    """``fetch`` answers the page after a cursor (None: the first page); ``total``, asked only
    for a progress bar, the length of the whole list."""

    def __init__(
        self,
        fetch: Fetch[PageT_co],
        limit: int | None,
        progress: bool,
        total: Total | None = None,
    ) -> None:
        self._fetch, self._limit, self._progress, self._total = fetch, limit, progress, total

    def pages(self) -> Iterator[PageT_co]:
        known = self._total() if self._progress and self._total is not None else None
        walk = Walk(self._limit, self._progress, known)
        try:
            page = self._fetch(None)
            while True:
                cursor = walk.step(page)
                yield page
                if cursor is None:
                    return
                page = self._fetch(cursor)
        finally:
            walk.close()

    def __iter__(self: Listing[Page[ItemT]]) -> Iterator[ItemT]:
        for page in self.pages():
            for item in page.items:
                yield item

    def to_pandas(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame(rows([item for item in self]))
