"""Plain values passed between the service layer and the adapters (no I/O, no framework)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from graphsvc.domain.cursor import Position
from graphsvc.domain.follow_options import DEFAULT as DEFAULT_OPTIONS
from graphsvc.domain.follow_options import FollowOptions

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A user's statuses; the last two are "inactive": hidden from every list and active count.
STATUSES = ("active", "suspended", "spam")
# Outbox events that never reach the event stream (what only the acting user may know).
PRIVATE_EVENTS = frozenset({"mute", "unmute"})


def iso_utc(micros: int) -> str:
    """Microseconds since the epoch as exact ISO-8601 UTC (no float rounding).

    A page formats one per entry: the whole seconds are formatted once and remembered (pages
    and bulk loads share seconds), the microseconds appended."""
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{_iso_second(seconds)}.{fraction:06d}Z"


@lru_cache(maxsize=4096)
def _iso_second(seconds: int) -> str:
    return (_EPOCH + timedelta(seconds=seconds)).isoformat()[:19]


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
    score: float | None = None  # the order of score-ordered lists (never shown to clients)

    @property
    def position(self) -> Position:
        return Position(self.since, self.user_id)


@dataclass(frozen=True, slots=True)
class Counts:
    """A user's exact counts. The active ones leave out suspended and spam users; friends are
    active mutual follows."""

    followers: int
    following: int
    followers_active: int
    following_active: int
    friends: int

    def values(self) -> tuple[int, int, int, int, int]:
        """In the order of the mirror's count fields (fr, fg, fa, ga, mu)."""
        return (
            self.followers,
            self.following,
            self.followers_active,
            self.following_active,
            self.friends,
        )

    @classmethod
    def zero(cls) -> Counts:
        return cls(0, 0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class UserCounts:
    """A user's exact counts as read from Neo4j at ``at`` (Neo4j's clock, microseconds), as of
    the user's count sequence ``cs`` (read under the user's lock, which numbered the read)."""

    at: int
    counts: Counts
    cs: int = 0


@dataclass(frozen=True, slots=True)
class CountChange:
    """How one numbered change moved a user's counts: ``delta`` per count (signed), the
    user's ``cs``-th change. The mirror adds it to counts as of ``cs - 1`` only, once."""

    cs: int
    delta: Counts


# What an edge change does to one of its users' counts: a numbered change, a reading (counts
# read under the user's lock after the change), or None (they did not move, or the user is
# gone).
CountUpdate = CountChange | UserCounts | None


@dataclass(frozen=True, slots=True)
class GraphEvent:
    """An effective change, as downstream services receive it on the event stream.

    ``id`` is unique per change (consumers drop repeats by it: delivery is at least once);
    ``version`` orders changes of one edge or user (the acting user's clock tick, µs).
    A private change (a mute) has an outbox event too, so the relay repairs its mirror write
    when that is lost, but it never reaches the stream: the muted user must not learn of it.
    """

    id: str
    type: str  # follow, unfollow, block, unblock, status, erase, privacy, follow_request,
    # follow_request_withdrawn, follow_request_rejected; private: mute, unmute
    src: str  # the acting user (the follower, the blocker, the user whose status changed)
    dst: str  # the other user ("" for status and erase)
    version: int
    status: str = ""  # the new status (status events)
    cause: str = ""  # "block" or "removed" (by the followed user) for an unfollow, "approved"
    # for the follow an approval made
    list: str = ""  # the list of a list event (list_created, list_changed, list_hidden,
    # list_shown, list_deleted, list_member_added, list_member_removed: public lists only)
    # a `severed` notice (dst: the user who lost them; cause: move): followers, followings lost
    followers: int = 0
    following: int = 0

    @property
    def private(self) -> bool:
        return self.type in PRIVATE_EVENTS

    def fields(self) -> dict[str, str | int]:
        fields: dict[str, str | int] = {
            "id": self.id,
            "type": self.type,
            "src": self.src,
            "dst": self.dst,
            "version": self.version,
        }
        if self.status:
            fields["status"] = self.status
        if self.cause:
            fields["cause"] = self.cause
        if self.list:
            fields["list"] = self.list
        if self.type == "severed":
            fields["followers"], fields["following"] = self.followers, self.following
        return fields


@dataclass(frozen=True, slots=True)
class EdgeChange:
    """One committed follow or unfollow, as the mirror needs it.

    ``version`` orders writes to this edge: the edge's follow time for a follow, the
    follower's clock tick for an unfollow. ``at`` is Neo4j's clock read while the write held
    its users' locks, or after its commit (the lists' fence: ``lua/common.lua``); None when
    Neo4j went away before it was read (the relay mirrors it).
    """

    src: str
    dst: str
    following: bool
    changed: bool
    version: int
    src_counts: CountUpdate
    dst_counts: CountUpdate
    at: int | None
    event: GraphEvent | None = None  # what the event stream says of it (None: no change)
    withdrawn: bool = False  # an unfollow that withdrew a pending follow request
    options: FollowOptions = DEFAULT_OPTIONS  # a follow's options in effect after it
    retuned: bool = False  # a follow that existed, whose options it changed


@dataclass(frozen=True, slots=True)
class ShownCounts:
    """A user's counts as a viewer may see them: ``counts`` None when they are hidden;
    ``pending_requests`` only for the user itself."""

    counts: Counts | None
    pending_requests: int | None = None


@dataclass(frozen=True, slots=True)
class RequestChange:
    """A follow of a locked user, committed as a pending request: nothing to mirror (a request
    is in no list and no count), an event when it is new."""

    src: str
    dst: str
    created: bool
    version: int
    event: GraphEvent | None = None
    options: FollowOptions = DEFAULT_OPTIONS  # the request's, which its approval keeps
    retuned: bool = False


@dataclass(frozen=True, slots=True)
class FollowResult:
    """What a follow came to: a follow, or a pending request to a locked user."""

    following: bool
    requested: bool
    created: bool
    options: FollowOptions = DEFAULT_OPTIONS
    retuned: bool = False  # a repeat that changed the options


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A user's newest list entries and exact counts, read from Neo4j at ``at``."""

    user_id: str
    at: int
    totals: Counts
    followers: list[Entry] = field(default_factory=list)
    following: list[Entry] = field(default_factory=list)
    inactive: bool = False
    cs: int = 0  # the user's count sequence the totals are exact as of

    def entries(self, side: Side) -> list[Entry]:
        return self.followers if side is Side.FOLLOWERS else self.following

    @property
    def reading(self) -> UserCounts:
        return UserCounts(self.at, self.totals, self.cs)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why Neo4j refused a new follow (a rule of relations/follow); nothing was written."""

    rule: str
    retry_at: int | None = None  # microseconds; when the rate limit lets the next follow in


@dataclass(frozen=True, slots=True)
class Relationship:
    """How a user relates to one other user."""

    user_id: str
    following: bool
    followed_by: bool
    blocking: bool
    blocked_by: bool
    requested: bool = False  # the user asked to follow the other (pending)
    requested_by: bool = False  # the other asked to follow the user (pending)
    muting: bool = False
    muting_until: int | None = None  # µs; None: the mute (if any) never expires
    options: FollowOptions | None = None  # of the user's follow or request; None: neither

    @property
    def mutual(self) -> bool:
        return self.following and self.followed_by


@dataclass(frozen=True, slots=True)
class BlockChange:
    """A committed block: whether it is new, and a removal per direction (``changed`` says
    whether there was a follow to remove)."""

    created: bool
    removed: list[EdgeChange]
    events: list[GraphEvent] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class UserState:
    status: str
    propagation_pending: bool
    erasing: bool
    approving: bool = False  # its pending follow requests are being approved


@dataclass(frozen=True, slots=True)
class IdPage:
    """A page of a list ordered by user id, with the size of the whole list: exact, or at
    least ``total`` when ``total_is_lower_bound`` (counting it all would cost too much)."""

    total: int
    user_ids: list[str]
    next_cursor: str | None = None
    total_is_lower_bound: bool = False


@dataclass(frozen=True, slots=True)
class IdSlice:
    """One bounded read of a list in id order: its total (``exact``, or a lower bound), the
    ids found after a position, and ``stopped_at``: when the read stopped examining the list
    before it found every id it wanted and before the list's end, the id it stopped at (the
    list goes on after it)."""

    total: int
    user_ids: list[str]
    exact: bool = True
    stopped_at: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class Interaction:
    """One interaction as a product reports it (validated by the interactions use case)."""

    actor: str
    target: str
    kind: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A person the user may know, with the reasons shown to the user.

    ``mutuals`` is everyone ``mutual_count`` counts, closest first (``via`` names the first
    three): the cache keeps them, never the answer, so a list served later counts and names
    only those whose following the user may still see. None where only ``via`` is known.
    ``counts_hidden``: the suggested user hid its counts when the score was computed, so the
    score does not depend on them (the cache keeps it, never the answer: a cached score
    computed while the counts were shown is not served once they are hidden)."""

    user_id: str
    score: float
    mutual_count: int
    via: list[str]
    sources: list[str]
    mutuals: list[str] | None = None
    counts_hidden: bool = False

    @property
    def recountable(self) -> bool:
        """Whether everyone ``mutual_count`` counts is known, so the count can be made again
        for the user's view now (a list cached without ``mutuals`` is computed again)."""
        return self.mutuals is not None or self.mutual_count <= len(self.via)

    @property
    def counted(self) -> list[str]:
        """The people ``mutual_count`` counts, as far as they are known."""
        return self.via if self.mutuals is None else self.mutuals

    def as_json(self) -> dict[str, object]:
        return {
            "user_id": self.user_id,
            "score": round(self.score, 6),
            "reasons": {"mutual_count": self.mutual_count, "via": self.via},
            "sources": self.sources,
        }

    def cached_json(self) -> dict[str, object]:
        """What the cache keeps: the answer's item, when known every one counted, and whether
        the score was computed blind to the counts."""
        item = self.as_json()
        if self.mutuals is not None:
            item["mutuals"] = self.mutuals
        if self.counts_hidden:
            item["counts_hidden"] = True
        return item

    @classmethod
    def from_json(cls, item: dict) -> Suggestion:
        reasons = item["reasons"]
        return cls(
            item["user_id"],
            item["score"],
            reasons["mutual_count"],
            reasons["via"],
            item["sources"],
            item.get("mutuals"),
            bool(item.get("counts_hidden", False)),
        )


@dataclass(frozen=True, slots=True)
class Familiar:
    """The people a user follows who follow ``target``: how many, and the first of them;
    ``total`` None when the target's followers are hidden from the viewer."""

    target: str
    total: int | None
    user_ids: list[str]
