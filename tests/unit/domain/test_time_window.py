"""A window of follow times: where a newest-first walk starts and where it stops."""

from __future__ import annotations

import string
from datetime import UTC, datetime

import pytest

from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import InvalidTimeRange
from graphsvc.domain.model import Entry
from graphsvc.domain.time_window import ABOVE_EVERY_ID, TimeWindow, micros_of
from graphsvc.wire.ids import is_user_id


def test_every_id_character_sorts_below_the_windows_end_mark() -> None:
    allowed = [c for c in string.printable if is_user_id(c)]
    assert allowed and all(c < ABOVE_EVERY_ID for c in allowed)
    assert not is_user_id(ABOVE_EVERY_ID)


def test_the_walk_starts_at_the_deeper_of_cursor_and_window() -> None:
    window = TimeWindow(before=100)
    assert window.start(None) == Position(99, ABOVE_EVERY_ID)
    assert window.start(Position(150, "a")) == Position(99, ABOVE_EVERY_ID)
    assert window.start(Position(50, "a")) == Position(50, "a")
    assert TimeWindow().start(Position(50, "a")) == Position(50, "a")


def test_the_walk_stops_at_the_older_end() -> None:
    entries = [Entry("c", 30), Entry("b", 20), Entry("a", 10)]
    assert TimeWindow(after=20).keep(entries) == entries[:1]
    assert TimeWindow().keep(entries) == entries


def test_a_moment_without_a_zone_is_utc_and_a_window_must_not_be_empty() -> None:
    naive, aware = datetime(2026, 1, 1), datetime(2026, 1, 1, tzinfo=UTC)
    assert micros_of(naive) == micros_of(aware)
    with pytest.raises(InvalidTimeRange):
        TimeWindow.of(aware, naive)
