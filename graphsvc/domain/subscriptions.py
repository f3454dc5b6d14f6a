"""Subscriptions to moderation lists, as plain values and rules.

A user subscribes to a moderation list it may see (public, or its own) to mute or block
every member, kept current as the list changes, less the people it excepts. What the
subscription did is recorded beside it, per person (``imposes``), so that unsubscribing undoes
exactly that: a mute or block the user made by hand is never lifted by a subscription, and a
person two subscriptions impose on stays muted or blocked until both are gone. Undoing by hand
a mute or block a subscription made excepts that person from the subscriptions that made it.

A subscription acts only while its subscriber may see the list: a list made private, deleted,
or whose owner blocks the subscriber stops acting, and what it did is undone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from graphsvc.domain.cursor import Position


class Action(StrEnum):
    MUTE = "mute"
    BLOCK = "block"


@dataclass(frozen=True, slots=True)
class Subscription:
    """One subscription as its subscriber sees it. ``state``: ``applying`` while the
    subscription's work is due, ``applied`` when what it does matches the list, ``lapsed`` when
    the subscriber may no longer see the list (what it did is being or was undone); ``owner``
    and ``name`` only while the list is visible to the subscriber. ``applied``: the people it
    mutes or blocks now; ``refused``: those a bound kept it from (MAX_BLOCKS, MUTE_MAX)."""

    list_id: str
    action: Action
    since: int
    state: str
    owner: str | None = None
    name: str | None = None
    applied: int = 0
    refused: int = 0
    exceptions: int = 0

    @property
    def position(self) -> Position:
        """Where a walk of the subscriber's subscriptions (newest first) stands after it."""
        return Position(self.since, self.list_id)


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """One step of a subscription's work: ``lift``, the people it imposed on that it no
    longer wants, each with the action it took and whether no other subscription of the user
    imposes the same on them (only then is it undone); ``apply``, the people it wants and has
    not acted on yet. ``version``: the subscription's version when planned (a change since
    makes its work due again)."""

    version: int
    action: Action
    gone: bool
    lift: list[tuple[str, Action, bool]] = field(default_factory=list)
    apply: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return not self.lift and not self.apply


def subscription_key(user_id: str, list_id: str) -> str:
    """The subscription's id: one per (subscriber, list)."""
    return f"{user_id}|{list_id}"


class HandClaims(Protocol):
    """What a mute or block made or undone by hand tells the user's subscriptions
    (``adapters/neo4j/subscriptions.py``): ``kept``, the mute or block is the user's own now
    (no subscription undoes it); else every subscription that would do it again excepts the
    person."""

    async def claim(self, user_id: str, target: str, action: Action, kept: bool) -> int: ...
