"""A window of follow times a list is read within (``since_after`` / ``since_before``), as
TAO reads an association list in a time range: a newest-first walk starts at the window's
newer end (or the cursor, when it is deeper) and stops at its older end, so a page costs what
it returns at any depth, in the mirror and past it alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import InvalidTimeRange
from graphsvc.domain.model import Entry, micros_from_datetime

ABOVE_EVERY_ID = "~"  # sorts after every character an id may have ([A-Za-z0-9_.-])


def micros_of(moment: datetime) -> int:
    """Microseconds since the epoch; a moment given without a zone is UTC's, as every time the
    service shows is."""
    return micros_from_datetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """Follow times strictly after ``after`` and strictly before ``before`` (microseconds;
    None: unbounded on that side)."""

    after: int | None = None
    before: int | None = None

    @classmethod
    def of(cls, after: datetime | None, before: datetime | None) -> TimeWindow:
        window = cls(
            None if after is None else micros_of(after),
            None if before is None else micros_of(before),
        )
        if window.after is not None and window.before is not None and window.after >= window.before:
            raise InvalidTimeRange(
                f"since_after ({after}) must be earlier than since_before ({before})"
            )
        return window

    def start(self, after: Position | None) -> Position | None:
        """Where a newest-first walk resumes: the cursor's position, or the window's newer
        end when that is deeper (a cursor of an unbounded walk, or none)."""
        if self.before is None:
            return after
        # the last position before `before`: every id sorts below ABOVE_EVERY_ID (a position
        # with no id would be the start of a list, its own time included)
        end = Position(self.before - 1, ABOVE_EVERY_ID)
        if after is None or (after.since, after.user_id) > (end.since, end.user_id):
            return end
        return after

    def keep(self, entries: Sequence[Entry]) -> list[Entry]:
        """The newest-first entries inside the window's older end (a prefix)."""
        if self.after is None:
            return list(entries)
        kept = []
        for entry in entries:
            if entry.since <= self.after:
                break
            kept.append(entry)
        return kept


WHOLE = TimeWindow()
