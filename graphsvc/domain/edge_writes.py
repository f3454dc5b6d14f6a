"""Edge writes as plain values, and the order a batch of them commits in.

Writes that arrive together commit in one Neo4j transaction (group commit), under the locks
of all their users. The batch is cut into rounds, which run in arrival order, so writes of one
user (a follow, then an unfollow of the same pair) apply in the order they came. Each kind of
a round runs as one statement over all its rows.

A follow or an unfollow joins the round of its users' last earlier writes when those were of
its own kind: the statement runs each row as its own subquery, which sees the rows before it
(``relations/follow``), so an import's thousands of follows by one user, or a move's follows
of one account, commit as a few statements, not one each. Follows of distinct pairs commute:
the order the statement runs them in is the order their ticks record. Any other write goes to
the round after the last earlier write of either of its users, where it meets no write of
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from graphsvc.domain.follow_options import OptionEdits

NO_LIMIT = 2**31 - 1
# The cause an unfollow's event carries when the followed user ended the follow (a removed
# follower); consumers treat it as any unfollow.
REMOVED = "removed"
# The cause of the unfollow of an account that moved: its follower follows the new one now.
MOVED = "moved"


class WriteKind(StrEnum):
    FOLLOW = "follow"
    UNFOLLOW = "unfollow"
    BLOCK = "block"
    UNBLOCK = "unblock"
    APPROVE = "approve"  # the followed user approves a pending follow request
    REJECT = "reject"  # the followed user rejects it


@dataclass(frozen=True, slots=True)
class WriteLimits:
    """The rules of a new follow, request or block that depend on settings; the defaults
    are off."""

    max_following: int = NO_LIMIT
    per_window: int = NO_LIMIT
    window_us: int = 1
    max_requests: int = NO_LIMIT  # follow requests waiting for approval, per requester
    max_blocks: int = NO_LIMIT  # users one blocks


@dataclass(frozen=True, slots=True)
class EdgeWrite:
    kind: WriteKind
    src: str  # the acting user: the follower (or requester), or the blocker
    dst: str
    limits: WriteLimits = field(default_factory=WriteLimits)
    cause: str = ""  # an unfollow's event cause: REMOVED when the followed user ended it
    edits: OptionEdits = field(default_factory=OptionEdits)  # a follow's options it names


# The kinds whose statements run row by row, each row seeing the rows before it.
SHARING = frozenset({WriteKind.FOLLOW, WriteKind.UNFOLLOW})


@dataclass(slots=True)
class Round:
    """Writes of a batch that run as one statement per kind: (position in the batch, write),
    by kind."""

    by_kind: dict[WriteKind, list[tuple[int, EdgeWrite]]] = field(default_factory=dict)


def plan_rounds(writes: list[EdgeWrite]) -> list[Round]:
    """Rounds in commit order; each kind's rows sorted by follower, a follower's own rows in
    arrival order. Within a round a user is in writes of one kind only: in one write at most,
    unless that kind is a follow or an unfollow (``SHARING``)."""
    rounds: list[Round] = []
    last: dict[str, tuple[int, WriteKind]] = {}  # user -> (round, kind) of its last write
    for position, write in enumerate(writes):
        ends = (write.src, write.dst)
        latest = max((last[user][0] for user in ends if user in last), default=-1)
        joins = write.kind in SHARING and all(
            last[user][1] is write.kind for user in ends if user in last and last[user][0] == latest
        )
        number = latest if joins and latest >= 0 else latest + 1
        for user in ends:
            last[user] = (number, write.kind)
        if number == len(rounds):
            rounds.append(Round())
        rounds[number].by_kind.setdefault(write.kind, []).append((position, write))
    for round_ in rounds:
        for rows in round_.by_kind.values():
            rows.sort(key=lambda row: (row[1].src, row[0]))
    return rounds


@dataclass(frozen=True, slots=True)
class BatchUser:
    """A user a batch writes (and locks): whether a write of the batch creates it when
    unknown (follows and blocks do)."""

    id: str
    create: bool


def batch_users(writes: list[EdgeWrite]) -> list[BatchUser]:
    """Every user of a batch, sorted by id: the one order in which batches take locks."""
    creating = {
        user
        for write in writes
        if write.kind in (WriteKind.FOLLOW, WriteKind.BLOCK)
        for user in (write.src, write.dst)
    }
    users = sorted({user for write in writes for user in (write.src, write.dst)})
    return [BatchUser(user, user in creating) for user in users]
