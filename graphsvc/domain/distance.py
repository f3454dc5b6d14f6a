"""Degrees of connection: how many follows lead from one user to another (1: it follows the
other; 2: it follows someone who does; 3; or more), found by a search from both ends that
reads at most a budget of follows, whatever the degrees on the way.

Each step widens the side whose next step reads fewer follows (known from the degrees before
reading them), so a celebrity end is approached from the other. The search ends when the two
sides meet (the distance), when three steps found nothing ("more"), or when the next step
would pass the budget (unknown beyond what was searched: ``exact`` false)."""

from __future__ import annotations

from dataclasses import dataclass

MAX_DISTANCE = 3


@dataclass(frozen=True, slots=True)
class Distance:
    distance: int | None  # 1-3, or None: more than MAX_DISTANCE (or not found in the budget)
    exact: bool  # False: the budget stopped the search before it could tell
    edges_read: int


class Search:
    """The state of one search: each side's users by their distance from its end, and what
    the next step of each side would read (the degrees of its frontier, in its direction)."""

    def __init__(self, source: str, target: str, out: int, into: int) -> None:
        self._seen = {True: {source: 0}, False: {target: 0}}  # forward, backward
        self._depth = {True: 0, False: 0}
        self._cost = {True: out, False: into}

    def frontier(self, forward: bool) -> list[str]:
        depth = self._depth[forward]
        return [user for user, d in self._seen[forward].items() if d == depth]

    def cost(self, forward: bool) -> int:
        return self._cost[forward]

    def depth(self) -> int:
        return self._depth[True] + self._depth[False]

    def widen(self, forward: bool, reached: dict[str, int]) -> bool:
        """Add one step's users (each with its degree in the side's direction) to a side;
        False when it reached nobody new (that side has no longer paths, so no path is)."""
        seen, depth = self._seen[forward], self._depth[forward] + 1
        new = {user: degree for user, degree in reached.items() if user not in seen}
        for user in new:
            seen[user] = depth
        self._depth[forward] = depth
        self._cost[forward] = sum(new.values())
        return bool(new)

    def met(self) -> int | None:
        """The shortest distance through a user both sides reached, if any."""
        forward, backward = self._seen[True], self._seen[False]
        both = forward.keys() & backward.keys()
        return min((forward[u] + backward[u] for u in both), default=None)
