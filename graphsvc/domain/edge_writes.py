"""Edge writes as plain values, and the order a batch of them commits in.

Writes that arrive together commit in one Neo4j transaction (group commit), under the locks
of all their users. The batch is cut into rounds: a write goes to the round after the last
earlier write of either of its users. Within a round no user is in two writes, so their order
does not matter and each kind runs as one statement over all its rows, each row reading back
its own users' count sequence ticks; rounds run in arrival order, so writes of one user (a
follow, then an unfollow of the same pair) apply in the order they came.
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


@dataclass(slots=True)
class Round:
    """Writes of a batch that share no user: (position in the batch, write), by kind."""

    by_kind: dict[WriteKind, list[tuple[int, EdgeWrite]]] = field(default_factory=dict)


def plan_rounds(writes: list[EdgeWrite]) -> list[Round]:
    """Rounds in commit order; each round's rows sorted by follower (a fixed order).
    A user is in one write of a round at most, whichever end it is: each row of a statement
    then reads its own count sequence ticks (``relations/follow``)."""
    rounds: list[Round] = []
    last_round: dict[str, int] = {}
    for position, write in enumerate(writes):
        ends = (write.src, write.dst)
        number = 1 + max((last_round.get(user, -1) for user in ends), default=-1)
        for user in ends:
            last_round[user] = number
        if number == len(rounds):
            rounds.append(Round())
        rounds[number].by_kind.setdefault(write.kind, []).append((position, write))
    for round_ in rounds:
        for rows in round_.by_kind.values():
            rows.sort(key=lambda row: (row[1].src, row[1].dst))
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
