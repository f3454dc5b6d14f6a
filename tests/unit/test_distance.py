"""The two-sided search's bookkeeping: where the sides meet, and when a side runs dry."""

from __future__ import annotations

from graphsvc.domain.distance import Search


def test_the_sides_meet_at_the_shortest_sum_of_depths() -> None:
    search = Search("u", "t")
    assert search.widen(True, ["a", "b"]) and search.met() is None
    assert search.widen(False, ["b", "c"]) and search.met() == 2
    assert search.frontier(True) == ["a", "b"] and search.depth() == 2


def test_a_side_that_reaches_nobody_new_ends_the_search() -> None:
    search = Search("u", "t")
    assert search.widen(True, ["a"])
    assert not search.widen(True, ["u", "a"])  # back where it was: no longer path
    follows = Search("u", "t")
    assert follows.widen(False, ["u"]) and follows.met() == 1  # u follows t
