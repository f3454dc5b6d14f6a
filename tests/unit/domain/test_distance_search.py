"""The two-sided search's bookkeeping: where the sides meet, and when a side runs dry."""

from __future__ import annotations

from graphsvc.domain.distance import Search


def test_the_sides_meet_at_the_shortest_sum_of_depths() -> None:
    search = Search("u", "t", 2, 5)
    assert search.widen(True, {"a": 3, "b": 4}) and search.met() is None
    assert search.cost(True) == 7 and search.cost(False) == 5
    assert search.widen(False, {"b": 1, "c": 1}) and search.met() == 2
    assert search.frontier(True) == ["a", "b"] and search.depth() == 2


def test_a_side_that_reaches_nobody_new_ends_the_search() -> None:
    search = Search("u", "t", 1, 1)
    assert search.widen(True, {"a": 1})
    assert not search.widen(True, {"u": 1, "a": 1})  # back where it was: no longer path
    follows = Search("u", "t", 1, 1)
    assert follows.widen(False, {"u": 1}) and follows.met() == 1  # u follows t
