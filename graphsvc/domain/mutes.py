"""Mutes as plain values: one user's mute of another, a committed change of one, and the form
the mirror keeps them in.

A mute is private to the muter: it hides the muted user's posts from the muter's timeline,
never suggests the muted user, and (when asked) drops the muted user's new-follower
notifications. It changes nothing the muted user can see: follows stay, counts stay, and no
event reaches the public stream. A mute may expire (``until``, µs): from then on it filters
nothing, whether or not it has been cleaned up yet.

The mirror keeps each of a user's mutes as ``version|until|n`` (``until`` 0: never expires;
``n`` 1: notifications muted too) and a removal as ``version|-``; the version is the muter's
clock tick of the write, so the newest write of a pair wins whatever order writes reach Redis
in (``lua/mute.lua``).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.domain.cursor import Position
from graphsvc.domain.model import GraphEvent


@dataclass(frozen=True, slots=True)
class Mute:
    """One mute of ``user_id`` (the muted user), as the muter's list shows it."""

    user_id: str
    since: int  # µs: when the mute began (an update of its options keeps it)
    until: int | None  # µs; None: never expires
    notifications: bool

    @property
    def position(self) -> Position:
        return Position(self.since, self.user_id)


@dataclass(frozen=True, slots=True)
class MuteChange:
    """A committed mute write: the muter's state of ``target`` from ``version`` on (``muting``
    false: no mute), and its outbox event when the state changed."""

    muter: str
    target: str
    version: int
    muting: bool
    until: int | None = None
    notifications: bool = False
    changed: bool = False  # created, updated or removed
    created: bool = False
    event: GraphEvent | None = None

    def encoded(self) -> str:
        """The mirror's form of this state (see the module)."""
        if not self.muting:
            return f"{self.version}|-"
        return f"{self.version}|{self.until or 0}|{int(self.notifications)}"


@dataclass(frozen=True, slots=True)
class MirroredMute:
    """One entry of the mirror: a mute's state at ``version`` (``muting`` false: removed)."""

    version: int
    muting: bool
    until: int | None = None
    notifications: bool = False

    @classmethod
    def decode(cls, text: str) -> MirroredMute:
        version, _, rest = text.partition("|")
        if rest == "-":
            return cls(int(version), False)
        until, _, notif = rest.partition("|")
        return cls(int(version), True, int(until) or None, notif == "1")

    def in_effect(self, now_us: int, *, notifications: bool = False) -> bool:
        """Whether it filters at ``now_us``: a mute not expired (and, for notifications, one
        that mutes them)."""
        live = self.muting and (self.until is None or self.until > now_us)
        return live and (self.notifications or not notifications)


def encode_mute(version: int, until: int | None, notifications: bool) -> str:
    """The mirror's form of a mute Neo4j holds (a snapshot's entry)."""
    return f"{version}|{until or 0}|{int(notifications)}"
