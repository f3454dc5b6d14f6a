"""A walk's progress bar knows the list's length: the counts a listing asked for, or an
IdPageBody's total, never more than the walk's limit."""

from __future__ import annotations

from graphsvc.client._walk import Walk
from graphsvc.wire.schemas import IdPageBody


def test_the_bar_is_as_long_as_the_list_or_the_limit() -> None:
    assert Walk(None, True, 2_500)._bar.total == 2_500  # type: ignore[union-attr]
    assert Walk(100, True, 2_500)._bar.total == 100  # type: ignore[union-attr]
    assert Walk(None, False, 2_500)._bar is None


def test_a_page_with_a_total_sets_an_unknown_length() -> None:
    walk = Walk(None, True, None)
    assert walk._bar is not None and walk._bar.total is None
    page = IdPageBody(total=7, items=["a", "b"], next_cursor="c")
    assert walk.step(page) == "c"
    assert (walk._bar.total, walk._bar.n) == (7, 2)
    walk.close()
