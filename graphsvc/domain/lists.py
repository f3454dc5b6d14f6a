"""Curated lists as plain values and rules: what a list is, who may see it, and what one
change of its members may ask.

A list belongs to its owner, who alone changes it. Its purpose is ``curate`` (people to read)
or ``moderation`` (people to keep away). A private list, its members and its existence are its
owner's alone: anyone else (anonymous, a stranger, a member, a key naming another viewer) gets
the answer an unknown list gets, so nobody learns it exists and a member is never told it is in
one. A public list is read by anyone the owner does not block, while the owner is active.

Blocks act on curate lists: while a block stands between the owner and a member, either way,
the member is left out of the owner's curate lists (their pages, counts and lookups), and a
curate list refuses to add a user in a block with its owner. A moderation list keeps them: it
lists the people its owner wants kept away, blocked ones first of all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import InvalidList, ListNotFound, ListTextTooLong, TooManyIds
from graphsvc.domain.ids import validate_user_ids
from graphsvc.domain.privacy import Viewer

LIST_ID_LENGTH = 20  # hex characters of a list id the service makes
LIST_ID = re.compile(rf"[0-9a-f]{{{LIST_ID_LENGTH}}}")


class Purpose(StrEnum):
    CURATE = "curate"
    MODERATION = "moderation"


@dataclass(frozen=True, slots=True)
class CuratedList:
    """A list as its owner made it; ``members``: its active members (suspended and spam
    accounts are left out of its pages and its count). Times in µs since the epoch. An
    ``exclusive`` list's members are read in the list's timeline instead of the owner's home
    timeline (a moderation list is never exclusive)."""

    id: str
    owner: str
    name: str
    description: str
    private: bool
    purpose: Purpose
    created: int
    updated: int
    members: int
    exclusive: bool = False  # a curate list whose members' posts leave the owner's home timeline

    @property
    def position(self) -> Position:
        """Where a walk of the owner's lists (newest first) stands after this one."""
        return Position(self.created, self.id)


@dataclass(frozen=True, slots=True)
class FollowedList:
    """A list a user follows, and when it followed it (µs)."""

    list: CuratedList
    since: int

    @property
    def position(self) -> Position:
        """Where a walk of the user's follows of lists (newest first) stands after it."""
        return Position(self.since, self.list.id)


@dataclass(frozen=True, slots=True)
class ListBounds:
    owner_max: int
    members_max: int
    name_max: int
    description_max: int
    batch_max: int


@dataclass(frozen=True, slots=True)
class MemberChange:
    """What one change of a list's members did: who was added and removed (an id already in,
    or not in, the list is neither), who was not added and why (``blocked``: a curate list and
    a block between the user and the owner; ``erasing``: the user is being erased), and how
    many active members the list holds after it."""

    added: list[str]
    removed: list[str]
    refused: dict[str, str] = field(default_factory=dict)
    members: int = 0


def check_exclusive(purpose: Purpose, exclusive: bool | None) -> None:
    """Only a curate list can be exclusive (a moderation list has no timeline)."""
    if exclusive and purpose is not Purpose.CURATE:
        raise InvalidList("only a curate list can be exclusive")


def list_not_found(owner: str, list_id: str) -> ListNotFound:
    """The one answer to a list the viewer may not see, and to one that does not exist."""
    return ListNotFound(f"user {owner!r} has no list {list_id!r} this viewer may see")


def validate_list_id(value: str) -> str:
    if not isinstance(value, str) or not LIST_ID.fullmatch(value):
        raise InvalidList(f"list id {value!r} is not a list id: {LIST_ID_LENGTH} hex characters")
    return value


def clean_name(name: str, bounds: ListBounds) -> str:
    """The name without surrounding blanks; refused when nothing is left, or when longer than
    LIST_NAME_MAX."""
    cleaned = name.strip()
    if not cleaned:
        raise InvalidList("a list's name cannot be empty")
    if len(cleaned) > bounds.name_max:
        raise ListTextTooLong(
            f"the name has {len(cleaned)} characters; LIST_NAME_MAX is {bounds.name_max}"
        )
    return cleaned


def clean_description(description: str, bounds: ListBounds) -> str:
    cleaned = description.strip()
    if len(cleaned) > bounds.description_max:
        raise ListTextTooLong(
            f"the description has {len(cleaned)} characters; LIST_DESCRIPTION_MAX is "
            f"{bounds.description_max}"
        )
    return cleaned


def member_ids(
    add: Sequence[str], remove: Sequence[str], bounds: ListBounds
) -> tuple[list[str], list[str]]:
    """The ids to add and to remove, each once and in the order given; refused when they name
    more than LIST_BATCH_MAX together (repeats counted, as sent), when both name one id, or
    when none is named."""
    if len(add) + len(remove) > bounds.batch_max:  # counted as sent, repeats included
        raise TooManyIds(
            f"{len(add) + len(remove)} members named; one request may name "
            f"LIST_BATCH_MAX = {bounds.batch_max}"
        )
    validate_user_ids(add, "add")
    validate_user_ids(remove, "remove")
    adding, removing = list(dict.fromkeys(add)), list(dict.fromkeys(remove))
    if not adding and not removing:
        raise InvalidList("name at least one member to add or remove")
    both = sorted(set(adding) & set(removing))
    if both:
        raise InvalidList(f"{both[0]!r} is both added and removed; name it once")
    return adding, removing


def may_see(found: CuratedList, viewer: Viewer, *, owner_active: bool, blocked: bool) -> bool:
    """Whether ``viewer`` may read the list (its name, count and members): its owner (or a key
    that sees everything) always; anyone else a public list of an active owner who does not
    block them."""
    if viewer.is_owner(found.owner):
        return True
    return not found.private and owner_active and not blocked
