"""Relations: follow, unfollow, block, unblock, and how a user relates to others.

Each write reads top-down, as Mastodon's ``FollowService#call`` does: the guards a request
can fail before anything is written, then the commit in Neo4j (whose rules, checked under the
acting user's lock, may still refuse it), then what happens after the commit (``writes``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from graphsvc.adapters.neo4j.store import EdgeStore
from graphsvc.domain.errors import (
    Blocked,
    FollowingLimit,
    FollowRateLimit,
    GraphError,
    SelfFollow,
    TooManyIds,
    UserErasing,
    UserSuspended,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import (
    BlockChange,
    EdgeChange,
    GraphEvent,
    Refusal,
    Relationship,
    iso_utc,
)
from graphsvc.services.writes import Writes
from graphsvc.settings import Settings


class Relations:
    def __init__(self, edges: EdgeStore, writes: Writes, settings: Settings) -> None:
        self._edges = edges
        self._writes = writes
        self._settings = settings

    async def follow(self, user_id: str, target_id: str) -> bool:
        """Make ``user_id`` follow ``target_id``; True when the edge is new. Repeating a
        follow is never refused and changes nothing."""
        _guard_distinct_valid_pair(user_id, target_id, "follow or unfollow")
        async with self._writes.hold(user_id):
            outcome = await self._edges.follow(
                user_id,
                target_id,
                max_following=self._settings.max_following,
                per_window=self._settings.follows_per_day,
                window_us=self._settings.follow_window_seconds * 1_000_000,
            )
            if isinstance(outcome, Refusal):
                raise self._refused(outcome, user_id, target_id)
            await self._writes.after_commit([outcome], _events_of(outcome), invalidate=[user_id])
        return outcome.changed

    async def unfollow(self, user_id: str, target_id: str) -> bool:
        """Remove the follow; True when there was one to remove."""
        _guard_distinct_valid_pair(user_id, target_id, "follow or unfollow")
        async with self._writes.hold(user_id):
            change = await self._edges.unfollow(user_id, target_id)
            if change is None:  # neither user ever existed: nothing to mirror
                return False
            await self._writes.after_commit([change], _events_of(change), invalidate=[user_id])
        return change.changed

    async def block(self, user_id: str, target_id: str) -> BlockChange:
        """``user_id`` blocks ``target_id``: follows both ways go, and neither may follow."""
        _guard_distinct_valid_pair(user_id, target_id, "block or unblock")
        async with self._writes.hold(user_id, target_id):
            change = await self._edges.block(user_id, target_id)
            await self._writes.after_commit(
                change.removed, change.events, invalidate=[user_id, target_id]
            )
        return change

    async def unblock(self, user_id: str, target_id: str) -> bool:
        """Remove the block (the follows it removed stay removed); True when there was one."""
        _guard_distinct_valid_pair(user_id, target_id, "block or unblock")
        async with self._writes.hold(user_id):
            event = await self._edges.unblock(user_id, target_id)
            if event is not None:
                await self._writes.after_commit(events=[event])
        return event is not None

    async def relationships(self, user_id: str, others: Sequence[str]) -> list[Relationship]:
        """How ``user_id`` relates to each of ``others`` (in the order given, once each)."""
        validate_user_id(user_id)
        maximum = self._settings.relationships_max_ids
        if not 1 <= len(others) <= maximum:
            raise TooManyIds(f"ids must name 1 to {maximum} users, got {len(others)}")
        for other in others:
            validate_user_id(other, "ids item")
        return await self._edges.relationships(user_id, list(dict.fromkeys(others)))

    def _refused(self, refusal: Refusal, user_id: str, target_id: str) -> GraphError:
        """The error for a rule of ``follow.cypher`` that refused the new edge."""
        settings = self._settings
        match refusal.rule:
            case "blocked":
                return Blocked(f"a block between {user_id!r} and {target_id!r} forbids this follow")
            case "suspended":
                return UserSuspended(f"user {user_id!r} is suspended and cannot follow")
            case "target_suspended":
                return UserSuspended(f"user {target_id!r} is suspended and cannot be followed")
            case "erasing":
                return UserErasing(f"{user_id!r} or {target_id!r} is being erased")
            case "following_limit":
                return FollowingLimit(
                    f"user {user_id!r} already follows {settings.max_following} users, the "
                    "limit (MAX_FOLLOWING); it resets only by unfollowing someone"
                )
            case "rate_limit":
                retry_at = refusal.retry_at or 0
                wait = max(1, -(-(retry_at - time.time_ns() // 1_000) // 1_000_000))
                return FollowRateLimit(
                    f"user {user_id!r} made {settings.follows_per_day} new follows within "
                    f"{settings.follow_window_seconds} s (FOLLOWS_PER_DAY); the next follow is "
                    f"allowed at {iso_utc(retry_at)}",
                    headers={"Retry-After": str(wait)},
                )
        raise AssertionError(f"unknown refusal {refusal.rule!r}")


def _guard_distinct_valid_pair(user_id: str, target_id: str, verb: str) -> None:
    """Both ids valid, and two different users (nobody follows or blocks itself)."""
    validate_user_id(user_id, "user_id")
    validate_user_id(target_id, "target_id")
    if user_id == target_id:
        raise SelfFollow(f"user {user_id!r} cannot {verb} itself")


def _events_of(change: EdgeChange) -> list[GraphEvent]:
    return [change.event] if change.event is not None else []
