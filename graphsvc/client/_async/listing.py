"""A paged list, walked for you: iterate it for every item across pages (``next_cursor``
followed), ``pages()`` for a page at a time, ``limit`` to stop early, ``progress`` for a
tqdm bar on a long walk, ``to_pandas()`` for a DataFrame (pandas imported on first use).

A listing is typed by its page model (``Listing[PageBody]``), so ``pages()`` gives the whole
body (an ``IdPageBody``'s ``total`` too) while iterating gives the page's items (``Item``,
``str``, ``TimelineItem``): the item type is read off the page model's ``items`` by ``Page``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    import pandas
    from tqdm import tqdm

ItemT = TypeVar("ItemT")


class Page(Protocol[ItemT]):
    """What a page of a walked list has (``PageBody``, ``IdPageBody``, ``TimelineBody``)."""

    items: list[ItemT]
    next_cursor: str | None


PageT = TypeVar("PageT", bound=Page[Any])
PageT_co = TypeVar("PageT_co", bound=Page[Any], covariant=True)


def _rows(items: list[Any]) -> list[dict[str, Any]]:
    return [i.model_dump() if isinstance(i, BaseModel) else {"user_id": i} for i in items]


def _bar(progress: bool, total: int | None) -> tqdm[Any] | None:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="user")


class _Walk:
    """The state of one walk, the same for both clients: each page fetched is trimmed to
    ``limit``, counted on the bar, and answered with the next page's cursor (None: the end)."""

    def __init__(self, limit: int | None, progress: bool) -> None:
        self._limit, self._seen = limit, 0
        self._bar = _bar(progress, limit)

    def step(self, page: Page[Any]) -> str | None:
        if self._limit is not None:
            page.items = page.items[: self._limit - self._seen]
        self._seen += len(page.items)
        if self._bar is not None:
            self._bar.update(len(page.items))
        if self._limit is not None and self._seen >= self._limit:
            return None
        return page.next_cursor

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class Listing(Generic[PageT_co]):
    """``fetch`` answers the page after a cursor (None: the first page)."""

    def __init__(
        self, fetch: Callable[[str | None], PageT_co], limit: int | None, progress: bool
    ) -> None:
        self._fetch, self._limit, self._progress = fetch, limit, progress

    def pages(self) -> Iterator[PageT_co]:
        walk = _Walk(self._limit, self._progress)
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
            yield from page.items

    def to_pandas(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame(_rows(list(self)))


class AsyncListing(Generic[PageT_co]):
    """``fetch`` answers the page after a cursor (None: the first page)."""

    def __init__(
        self,
        fetch: Callable[[str | None], Awaitable[PageT_co]],
        limit: int | None,
        progress: bool,
    ) -> None:
        self._fetch, self._limit, self._progress = fetch, limit, progress

    async def pages(self) -> AsyncIterator[PageT_co]:
        walk = _Walk(self._limit, self._progress)
        try:
            page = await self._fetch(None)
            while True:
                cursor = walk.step(page)
                yield page
                if cursor is None:
                    return
                page = await self._fetch(cursor)
        finally:
            walk.close()

    async def __aiter__(self: AsyncListing[Page[ItemT]]) -> AsyncIterator[ItemT]:
        async for page in self.pages():
            for item in page.items:
                yield item

    async def to_pandas(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame(_rows([item async for item in self]))
