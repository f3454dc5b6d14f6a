"""A paged list, walked for you: iterate it for every item across pages (``next_cursor``
followed), ``pages()`` for a page at a time, ``limit`` to stop early, ``progress`` for a
tqdm bar on a long walk, ``to_pandas()`` for a DataFrame (pandas imported on first use)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

from graphsvc.client._core import Call


def _rows(items: list[Any]) -> list[dict[str, Any]]:
    return [i.model_dump() if hasattr(i, "model_dump") else {"user_id": i} for i in items]


def _bar(progress: bool, total: int | None) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="user")


class _Walk:
    """The state of one walk, the same for both clients: each page fetched is trimmed to
    ``limit``, counted on the bar, and answered with the next call (None: the end)."""

    def __init__(self, call: Call, limit: int | None, progress: bool) -> None:
        self.call, self._limit, self._seen = call, limit, 0
        self._bar = _bar(progress, limit)

    def step(self, page: Any) -> Call | None:
        if self._limit is not None:
            page.items = page.items[: self._limit - self._seen]
        self._seen += len(page.items)
        if self._bar is not None:
            self._bar.update(len(page.items))
        if page.next_cursor is None or (self._limit is not None and self._seen >= self._limit):
            return None
        return self.call.at(cursor=page.next_cursor)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class Listing:
    def __init__(self, fetch: Callable[[Call], Any], call: Call, limit: int | None, progress: bool):
        self._fetch, self._call, self._limit, self._progress = fetch, call, limit, progress

    def pages(self) -> Iterator[Any]:
        walk = _Walk(self._call, self._limit, self._progress)
        call: Call | None = self._call
        try:
            while call is not None:
                page = self._fetch(call)
                call = walk.step(page)
                yield page
        finally:
            walk.close()

    def __iter__(self) -> Iterator[Any]:
        for page in self.pages():
            yield from page.items

    def to_pandas(self) -> Any:
        import pandas

        return pandas.DataFrame(_rows(list(self)))


class AsyncListing:
    def __init__(
        self, fetch: Callable[[Call], Coroutine[Any, Any, Any]], call: Call, limit: int | None,
        progress: bool,
    ) -> None:  # fmt: skip
        self._fetch, self._call, self._limit, self._progress = fetch, call, limit, progress

    async def pages(self) -> AsyncIterator[Any]:
        walk = _Walk(self._call, self._limit, self._progress)
        call: Call | None = self._call
        try:
            while call is not None:
                page = await self._fetch(call)
                call = walk.step(page)
                yield page
        finally:
            walk.close()

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for page in self.pages():
            for item in page.items:
                yield item

    async def to_pandas(self) -> Any:
        import pandas

        return pandas.DataFrame(_rows([item async for item in self]))
