"""How one follow edge, made or removed, moves its two users' counts.

The write that makes or removes the edge holds both users' locks in Neo4j, so what decides
the change is stable while it commits: whether each user is active, whether the followed user
follows back, and whether the edge counted its follower as inactive (its flag ``x``). The
counts are those of ``snapshots/counts``: followers and followings; active followers (all but
the flagged edges); active followings (followed users not inactive); friends (active followed
users who follow back). From these facts alone the change is exact, so nothing is read after
the commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.domain.model import Counts


@dataclass(frozen=True, slots=True)
class EdgeFacts:
    """What a committed edge change found, under both users' locks."""

    following: bool  # the edge was made (else removed)
    src_on: bool  # the follower is active
    dst_on: bool  # the followed user is active
    back: bool  # the followed user follows the follower
    flagged: bool  # the edge counts its follower as inactive


def edge_deltas(facts: EdgeFacts) -> tuple[Counts, Counts]:
    """The change of the follower's counts and of the followed user's."""
    sign = 1 if facts.following else -1
    src = Counts(
        followers=0,
        following=sign,
        followers_active=0,
        following_active=sign * facts.dst_on,
        friends=sign * (facts.dst_on and facts.back),
    )
    dst = Counts(
        followers=sign,
        following=0,
        followers_active=sign * (not facts.flagged),
        following_active=0,
        friends=sign * (facts.src_on and facts.back),
    )
    return src, dst
