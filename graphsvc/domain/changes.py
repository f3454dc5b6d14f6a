"""Changes of a user's lists: follows made and ended, in the order they happened, and what a
viewer may be told of why a follow ended.

A follow ends for a cause: the follower unfollowed (``unfollow``), the followed user removed
the follower (``removed``), or one of them blocked the other (``block``). Who did what is the
business of the people in the change, and not all of it even of both:

- the user who ended the follow (and a key that sees everything) is told the cause;
- the other user of the change is told ``unfollow`` when the follower ended it, by its
  unfollow or by its block (from the followed user's side that is what happened: the
  follower left), and nothing else: a removed follower is not told it was removed, as the
  removal route promises, and a blocked one is not told of the block, which the lists of
  blocks keep to their owner too;
- anyone else is told nothing of why.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.domain.model import Side
from graphsvc.domain.privacy import Viewer

FOLLOW = "follow"
UNFOLLOW = "unfollow"
DAY_US = 86_400_000_000  # a retention in days, in the microseconds every time is kept in


@dataclass(frozen=True, slots=True)
class Change:
    """One change of a user's list: ``user_id`` (the other user) followed or unfollowed, at
    ``at`` (microseconds); an unfollow's ``cause`` and ``by`` (who caused it)."""

    at: int
    user_id: str
    op: str
    cause: str | None = None
    by: str | None = None


@dataclass(frozen=True, slots=True)
class ChangePage:
    """A page of changes, oldest first. ``next_cursor`` resumes after its last change (after
    the caller's own cursor when the page is empty), now or later: a poll of what is new;
    ``more`` says whether another page is ready now."""

    items: list[Change]
    next_cursor: str
    more: bool


def shown_cause(change: Change, owner: str, side: Side, viewer: Viewer) -> str | None:
    """The cause of an ended follow as the viewer may know it (None: not said).

    ``owner``'s list on ``side`` holds the change; the follower is the owner on the
    following side, the other user on the followers side."""
    if change.op != UNFOLLOW or change.cause is None:
        return None
    if viewer.sees_all or (viewer.user_id is not None and viewer.user_id == change.by):
        return change.cause
    if viewer.user_id is None or viewer.user_id not in (owner, change.user_id):
        return None
    follower = owner if side is Side.FOLLOWING else change.user_id
    return UNFOLLOW if change.by == follower else None
