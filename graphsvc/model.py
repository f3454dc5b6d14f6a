"""Plain values passed between the service layer and the adapters."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from graphsvc.cursor import Position

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_utc(micros: int) -> str:
    """Microseconds since the epoch as exact ISO-8601 UTC (no float rounding)."""
    moment = _EPOCH + timedelta(microseconds=micros)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def micros_from_datetime(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


class Side(enum.Enum):
    """One of a user's two lists. The value is the one-letter tag used in Redis keys."""

    FOLLOWERS = "r"
    FOLLOWING = "g"

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Entry:
    """One user in a list, with the follow time (microseconds since the epoch)."""

    user_id: str
    since: int

    @property
    def position(self) -> Position:
        return Position(self.since, self.user_id)


@dataclass(frozen=True, slots=True)
class UserCounts:
    """A user's exact counts as read from Neo4j at ``at`` (Neo4j's clock, microseconds)."""

    at: int
    followers: int
    following: int


@dataclass(frozen=True, slots=True)
class EdgeChange:
    """One committed follow or unfollow, as the mirror needs it.

    ``version`` orders writes to this edge: the edge's follow time for a follow, the
    follower's clock tick for an unfollow. The counts were read after the commit.
    """

    src: str
    dst: str
    following: bool
    changed: bool
    version: int
    src_counts: UserCounts
    dst_counts: UserCounts


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A user's newest list entries and exact counts, read from Neo4j at ``at``."""

    user_id: str
    at: int
    followers_count: int
    following_count: int
    followers: list[Entry] = field(default_factory=list)
    following: list[Entry] = field(default_factory=list)

    def entries(self, side: Side) -> list[Entry]:
        return self.followers if side is Side.FOLLOWERS else self.following

    def count(self, side: Side) -> int:
        return self.followers_count if side is Side.FOLLOWERS else self.following_count

    @property
    def counts(self) -> UserCounts:
        return UserCounts(self.at, self.followers_count, self.following_count)


@dataclass(frozen=True, slots=True)
class Counts:
    followers: int
    following: int


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None
