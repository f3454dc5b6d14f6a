"""What both listings share: the shape of a page, the state of one walk, the rows of a
DataFrame. A listing is typed by its page model (``Listing[PageBody]``), so ``pages()`` gives
the whole body (an ``IdPageBody``'s ``total`` too) while iterating gives the page's items
(``Item``, ``str``, ``TimelineItem``): the item type is read off the page model's ``items``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from tqdm import tqdm

ItemT = TypeVar("ItemT")


class Page(Protocol[ItemT]):
    """What a page of a walked list has (``PageBody``, ``IdPageBody``, ``TimelineBody``)."""

    items: list[ItemT]

    @property
    def next_cursor(self) -> str | None: ...


PageT = TypeVar("PageT", bound=Page[Any])
PageT_co = TypeVar("PageT_co", bound=Page[Any], covariant=True)

# What a listing calls for the page after a cursor (None: the first page).
Fetch = Callable[[str | None], PageT_co]
AsyncFetch = Callable[[str | None], Awaitable[PageT_co]]
# What a listing calls once, before its first page, for the length of the whole list
# (None: unknown), when it draws a progress bar.
Total = Callable[[], int | None]
AsyncTotal = Callable[[], Awaitable[int | None]]


def rows(items: list[Any]) -> list[dict[str, Any]]:
    """The items as DataFrame rows: a model's fields (times stay datetimes), or an id."""
    return [i.model_dump() if isinstance(i, BaseModel) else {"user_id": i} for i in items]


class Walk:
    """The state of one walk, the same for both clients: each page fetched is trimmed to
    ``limit``, counted on the bar, and answered with the next page's cursor (None: the end).
    The bar's total is the list's length where it is known (the counts, an ``IdPageBody``'s
    ``total``), at most ``limit``."""

    def __init__(self, limit: int | None, progress: bool, total: int | None) -> None:
        self._limit, self._seen = limit, 0
        self._bar = _bar(progress, _least(limit, total))

    def step(self, page: Page[Any]) -> str | None:
        if self._limit is not None:
            page.items = page.items[: self._limit - self._seen]
        self._seen += len(page.items)
        if self._bar is not None:
            if self._bar.total is None and isinstance(getattr(page, "total", None), int):
                self._bar.total = _least(self._limit, page.total)  # type: ignore[attr-defined]
                self._bar.refresh()
            self._bar.update(len(page.items))
        if self._limit is not None and self._seen >= self._limit:
            return None
        return page.next_cursor

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _least(limit: int | None, total: int | None) -> int | None:
    known = [n for n in (limit, total) if n is not None]
    return min(known) if known else None


def _bar(progress: bool, total: int | None) -> tqdm[Any] | None:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="user")
