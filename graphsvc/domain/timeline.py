"""Home timelines as plain values: a post reference, an author's timeline mode and its switches,
and the merge of a home timeline with celebrities' authors' posts (no I/O).

A post is known by its author and an id the product chose (``PUT /v1/users/a/posts/p1``); the
content stays in the product's own store. In Redis a post is the member ``author|post_id``
scored by its time in microseconds, in its author's posts and in its readers' home timelines. Both
ids come from ``[A-Za-z0-9_.-]``, so ``|`` cannot occur in either, and members sort by author
and then post id, which breaks ties between posts of the same microsecond.

An author is in one of three modes, decided when it posts (``lua/timeline_publish.lua``):

- ``push`` (ordinary): a post goes to the author's posts and is pushed into every active follower's
  home timeline by a background fan-out.
- ``pull`` (celebrity): a post goes to the author's posts only; readers merge it on read.
- ``draining`` (a celebrity fallen below the exit threshold): posts are pushed again, readers
  still pull the author, and a job pushes the author's posts into every follower's home timeline;
  then the author is ``push`` and readers stop pulling it.

Hysteresis (enter at TIMELINE_CELEBRITY_FOLLOWERS, leave below TIMELINE_HYSTERESIS of it) keeps an
author near the threshold from flapping, since each switch back to push costs a fan-out.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

SEPARATOR = "|"


class Mode(enum.StrEnum):
    PUSH = "push"
    PULL = "pull"
    DRAINING = "draining"

    @property
    def pushes(self) -> bool:
        """Posts of this author go into followers' home timelines."""
        return self is not Mode.PULL

    @property
    def pulled(self) -> bool:
        """Readers merge this author's posts on read."""
        return self is not Mode.PUSH


class Post(NamedTuple):
    """A post in a timeline. A tuple, so that posts compare as timelines order them (oldest
    first; read them reversed) at C speed: merges compare them thousands of times a second."""

    at: int  # microseconds since the epoch
    member: str  # author|post_id

    @classmethod
    def of(cls, author: str, post_id: str, at: int) -> Post:
        return cls(at, f"{author}{SEPARATOR}{post_id}")

    @property
    def author(self) -> str:
        return self.member.partition(SEPARATOR)[0]

    @property
    def post_id(self) -> str:
        return self.member.partition(SEPARATOR)[2]


class PostKind(NamedTuple):
    """What a follower's options (``follow_options``) filter a post by: its language (None:
    the author did not say) and whether it is a reblog of another post."""

    language: str | None = None
    reblog: bool = False

    @classmethod
    def of_state(cls, state: dict) -> PostKind:
        """From a post's stored state (``timeline_publish.lua``: ``lang``, ``reblog``)."""
        return cls(state.get("lang"), bool(state.get("reblog")))


PLAIN = PostKind()


def author_of(member: str) -> str:
    return member.partition(SEPARATOR)[0]


def newest_first(sources: Iterable[list[Post]]) -> list[Post]:
    """Posts of several sources in one list, newest first, each post once (a post pushed
    before its author became a celebrity is in the home timeline and in the author's posts). A sort
    rather than a heap merge: the lists are short, and tuples sort in C."""
    unique = {post.member: post for source in sources for post in source}
    return sorted(unique.values(), reverse=True)


def after(post: Post, position: Post | None) -> bool:
    """``post`` comes strictly after ``position`` in newest-first order."""
    return position is None or post < position


@dataclass(frozen=True, slots=True)
class PostState:
    """A published post, as ``GET /v1/users/{a}/posts/{p}`` reports it."""

    author: str
    post_id: str
    at: int
    mode: str  # push or pull: how this post reached readers
    state: str  # fanning_out, done, deleting, deleted
    followers: int = 0  # followers the fan-out walked
    pushed: int = 0  # home timeline writes (active followers reached)
    kind: PostKind = PLAIN


@dataclass(frozen=True, slots=True)
class TimelinePage:
    items: list[Post]
    next_cursor: str | None
