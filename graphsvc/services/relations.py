"""Relations: follow, unfollow, a follower's removal, block, unblock, and how a user relates to
others.

Each write reads top-down, as Mastodon's ``FollowService#call`` does: the guards a request
can fail before anything is written, then the commit in Neo4j (whose rules, checked under the
acting user's lock, may still refuse it), then what happens after the commit (``writes``).
Writes that arrive together share the commit and what follows it (``group_commit``): a
refusal still refuses only its own write, and each caller is answered once its write is
committed and mirrored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from graphsvc.adapters.neo4j.relations import EdgeStore, WriteOutcome
from graphsvc.concurrency.group_commit import GroupCommit
from graphsvc.concurrency.metrics import BATCH_LOCKS, BATCH_MIRROR, WRITE_BATCH_WRITES
from graphsvc.domain.edge_writes import (
    MOVED,
    NO_LIMIT,
    REMOVED,
    EdgeWrite,
    WriteKind,
    WriteLimits,
)
from graphsvc.domain.errors import (
    Blocked,
    BlockLimit,
    FollowingLimit,
    FollowRateLimit,
    FollowRequestLimit,
    GraphError,
    NoFollowRequest,
    SelfAction,
    SelfFollow,
    TooManyIds,
    UserErasing,
    UserSuspended,
)
from graphsvc.domain.follow_options import NO_EDITS, OptionEdits
from graphsvc.domain.ids import validate_user_id, validate_user_ids
from graphsvc.domain.model import (
    BlockChange,
    EdgeChange,
    FollowResult,
    GraphEvent,
    Refusal,
    Relationship,
    RequestChange,
    iso_utc,
)
from graphsvc.domain.subscriptions import Action, HandClaims
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.writes import Writes
from graphsvc.settings import PageSettings, WriteSettings


class Relations:
    def __init__(
        self,
        edges: EdgeStore,
        writes: Writes,
        settings: WriteSettings,
        lists: PageSettings,
        feedback: SuggestionFeedback,
        claims: HandClaims,
    ) -> None:
        self._edges = edges
        self._claims = claims
        self._writes = writes
        self._feedback = feedback
        self._settings = settings
        self._max_ids = lists.relationships_max_ids
        self._limits = WriteLimits(
            max_following=settings.max_following,
            per_window=settings.follows_per_day,
            window_us=settings.follow_window_seconds * 1_000_000,
            max_requests=settings.follow_requests_max,
            max_blocks=settings.max_blocks,
        )
        self._unpaced = replace(self._limits, per_window=NO_LIMIT)
        self._batches = _group_commit(self._commit_batch, settings, settings.write_batch_max)
        # The service's own writes for users (an import's, a move's): thousands at a time that
        # no request waits on, in bigger batches, not shared out (they share their user); the
        # in-process locks order them with the rest.
        most = settings.write_batch_max_background
        self._background = _group_commit(self._commit_batch, settings, most, share=False)

    async def follow(
        self,
        user_id: str,
        target_id: str,
        recommendation_id: str | None = None,
        edits: OptionEdits = NO_EDITS,
        *,
        paced: bool = True,
    ) -> FollowResult:
        """Make ``user_id`` follow ``target_id``, or, when the target is locked, ask to: a
        pending request the target approves or rejects. Repeating a follow or a request is
        never refused; it changes the options it names (``edits``) and nothing else. A new
        follow carrying a recommendation id counts once for its version, after the commit
        (``recommendations``). A follow the service makes for the user (``paced`` False: an
        import's, a move's) is no pace of the user's own: FOLLOWS_PER_DAY neither refuses it
        nor counts it, as in Mastodon; MAX_FOLLOWING and every other rule still apply. It
        commits in the background batches (WRITE_BATCH_MAX_BACKGROUND)."""
        _guard_distinct_valid_pair(user_id, target_id, "follow or unfollow")
        recommendation = self._feedback.carried(user_id, recommendation_id)
        limits = self._limits if paced else self._unpaced
        write = EdgeWrite(WriteKind.FOLLOW, user_id, target_id, limits, edits=edits)
        outcome = await (self._batches if paced else self._background).submit(write)
        match outcome:
            case Refusal():
                raise _refusal_error(outcome, self._settings, user_id, target_id)
            case RequestChange():
                return FollowResult(False, True, outcome.created, outcome.options, outcome.retuned)
        assert isinstance(outcome, EdgeChange)
        if outcome.changed:
            await self._feedback.followed(recommendation, target_id)
        return FollowResult(True, False, outcome.changed, outcome.options, outcome.retuned)

    async def unfollow(self, user_id: str, target_id: str) -> EdgeChange | None:
        """Remove the follow, or withdraw a pending request; the change (None: neither user
        ever existed), whose ``changed`` says a follow was removed and ``withdrawn`` that a
        request was."""
        _guard_distinct_valid_pair(user_id, target_id, "follow or unfollow")
        change = await self._batches.submit(EdgeWrite(WriteKind.UNFOLLOW, user_id, target_id))
        assert change is None or isinstance(change, EdgeChange)
        return change

    async def moved_away(self, follower_id: str, old_id: str) -> bool:
        """A move took ``follower_id`` from ``old_id`` to the account it moved to: its
        follow of the old account ends as an unfollow (``cause=moved``, counted by the
        move); True when there was one."""
        write = EdgeWrite(WriteKind.UNFOLLOW, follower_id, old_id, cause=MOVED)
        return await self._unfollow(write, self._background)

    async def approve(self, user_id: str, requester_id: str) -> bool:
        """``user_id`` approves the pending request of ``requester_id``: it becomes a follow,
        the rules of a new follow checked again under both users' locks. True when a follow
        was made, False when it existed already; 404 ``no_follow_request`` when neither."""
        _guard_distinct_valid_pair(requester_id, user_id, "approve a follow request of")
        write = EdgeWrite(WriteKind.APPROVE, requester_id, user_id, self._limits)
        outcome = await self._batches.submit(write)
        if isinstance(outcome, Refusal):
            if outcome.rule == "no_request":
                raise NoFollowRequest(
                    f"user {requester_id!r} has no pending request to follow {user_id!r}"
                )
            raise _refusal_error(outcome, self._settings, requester_id, user_id)
        assert isinstance(outcome, EdgeChange)
        return outcome.changed

    async def reject(self, user_id: str, requester_id: str) -> bool:
        """``user_id`` rejects the pending request of ``requester_id`` (who is not told);
        True when there was one."""
        _guard_distinct_valid_pair(requester_id, user_id, "reject a follow request of")
        event = await self._batches.submit(EdgeWrite(WriteKind.REJECT, requester_id, user_id))
        return event is not None

    async def remove_follower(self, user_id: str, follower_id: str) -> bool:
        """``user_id`` ends ``follower_id``'s follow of it; True when there was one.

        It is the follower's unfollow, under the follower's lock and versioned on its clock
        (the follower owns its outgoing edges: the order of its follows and unfollows of this
        user is the order of their ticks, whoever asked), so counts, lists, the event and the
        timelines change as for an unfollow. The event says ``cause=removed``; the follower is
        told nothing and may follow again. A pending request is no follow: it is left to be
        answered, and the requester withdrew nothing."""
        validate_user_id(user_id, "user_id")
        validate_user_id(follower_id, "follower_id")
        _refuse_self_removal(user_id, [follower_id])
        return await self._unfollow(_removal(user_id, follower_id))

    async def remove_followers(self, user_id: str, follower_ids: Sequence[str]) -> dict[str, bool]:
        """``remove_follower`` for each id (once each, in the order given), all submitted at
        once so they share batches. Every id is checked before any is written: a bad one
        refuses the whole request and changes nothing."""
        validate_user_id(user_id, "user_id")
        most = self._settings.remove_followers_max_ids
        if not 1 <= len(follower_ids) <= most:
            raise TooManyIds(f"ids must name 1 to {most} followers, got {len(follower_ids)}")
        validate_user_ids(follower_ids, "ids item")
        _refuse_self_removal(user_id, follower_ids)
        distinct = list(dict.fromkeys(follower_ids))
        removed = await asyncio.gather(
            *(self._unfollow(_removal(user_id, follower)) for follower in distinct)
        )
        return dict(zip(distinct, removed, strict=True))

    async def _unfollow(self, write: EdgeWrite, batches: GroupCommit | None = None) -> bool:
        change = await (batches or self._batches).submit(write)
        return isinstance(change, EdgeChange) and change.changed  # None: neither user existed

    async def block(self, user_id: str, target_id: str, *, by_hand: bool = True) -> BlockChange:
        """``user_id`` blocks ``target_id``: follows both ways go, and neither may follow. A
        new block is refused at MAX_BLOCKS (checked under the blocker's lock in Neo4j): every
        read of relationships tests each asked id against the blocks of its blocker. A block
        made by hand (not by a subscription's work) is the user's own: no subscription to a
        moderation list undoes it."""
        _guard_distinct_valid_pair(user_id, target_id, "block or unblock")
        write = EdgeWrite(WriteKind.BLOCK, user_id, target_id, self._limits)
        change = await self._batches.submit(write)
        if isinstance(change, Refusal):
            raise _refusal_error(change, self._settings, user_id, target_id)
        assert isinstance(change, BlockChange)
        if by_hand:
            await self._claims.claim(user_id, target_id, Action.BLOCK, kept=True)
        return change

    async def unblock(self, user_id: str, target_id: str, *, by_hand: bool = True) -> bool:
        """Remove the block (the follows it removed stay removed); True when there was one.
        Undone by hand, a block a subscription made stays undone: the subscriptions that
        would make it again except the user."""
        _guard_distinct_valid_pair(user_id, target_id, "block or unblock")
        event = await self._batches.submit(EdgeWrite(WriteKind.UNBLOCK, user_id, target_id))
        if event is not None and by_hand:
            await self._claims.claim(user_id, target_id, Action.BLOCK, kept=False)
        return event is not None

    async def _commit_batch(self, writes: list[EdgeWrite]) -> list[WriteOutcome]:
        """The write order (``writes``) for a batch: the in-process lock of every user it
        writes, one commit in Neo4j for all, then one Redis round trip for all their mirror
        writes and events. The lock covers followed users too, not only the acting ones: two
        batches of a process then never wait for each other's node locks inside Neo4j, where
        a waiter on a node whose holder goes on to change that node's relationships is
        reported as a deadlock (a false one, but the whole batch would be retried)."""
        WRITE_BATCH_WRITES.observe(len(writes))
        asked = time.perf_counter()
        async with self._writes.hold(*{u for w in writes for u in (w.src, w.dst)}):
            BATCH_LOCKS.observe(time.perf_counter() - asked)
            outcomes = await self._edges.commit(writes)
            changes, events, invalidate = _mirror_work(writes, outcomes)
            if changes or events:
                with BATCH_MIRROR.time():
                    await self._writes.after_commit(changes, events, invalidate=sorted(invalidate))
        return outcomes

    async def relationships(self, user_id: str, others: Sequence[str]) -> list[Relationship]:
        """How ``user_id`` relates to each of ``others`` (in the order given, once each)."""
        validate_user_id(user_id)
        maximum = self._max_ids
        if not 1 <= len(others) <= maximum:
            raise TooManyIds(f"ids must name 1 to {maximum} users, got {len(others)}")
        validate_user_ids(others, "ids item")
        return await self._edges.relationships(user_id, list(dict.fromkeys(others)))


def _mirror_work(
    writes: list[EdgeWrite], outcomes: list[WriteOutcome]
) -> tuple[list[EdgeChange], list[GraphEvent], set[str]]:
    """What a batch's committed outcomes ask of the mirror: the edge changes, the events, and
    the users whose suggestions they change."""
    changes: list[EdgeChange] = []
    events: list[GraphEvent] = []
    invalidate: set[str] = set()
    for write, outcome in zip(writes, outcomes, strict=True):
        match outcome:
            case EdgeChange():
                changes.append(outcome)
                events += _events_of(outcome)
                invalidate.add(write.src)
            case RequestChange():
                events += [outcome.event] if outcome.event is not None else []
                invalidate.add(write.src)  # a requested user is no suggestion
            case BlockChange():
                changes += outcome.removed
                events += outcome.events
                invalidate.update((write.src, write.dst))
            case GraphEvent():
                events.append(outcome)
    return changes, events, invalidate


def _group_commit(
    commit: Callable[[list[EdgeWrite]], Awaitable[list[WriteOutcome]]],
    settings: WriteSettings,
    most: int,
    *,
    share: bool = True,
) -> GroupCommit[EdgeWrite, WriteOutcome]:
    return GroupCommit(
        commit,
        window_ms=settings.write_batch_window_ms,
        max_size=most,
        concurrency=settings.write_batch_concurrency,
        share=share,
    )


def _guard_distinct_valid_pair(user_id: str, target_id: str, verb: str) -> None:
    """Both ids valid, and two different users (nobody follows or blocks itself)."""
    validate_user_id(user_id, "user_id")
    validate_user_id(target_id, "target_id")
    if user_id == target_id:
        raise SelfFollow(f"user {user_id!r} cannot {verb} itself")


def _refusal_error(
    refusal: Refusal, settings: WriteSettings, user_id: str, target_id: str
) -> GraphError:
    """The error for a rule of ``relations/follow`` (or ``block``) that refused the new edge."""
    match refusal.rule:
        case "blocked":
            return Blocked(f"a block between {user_id!r} and {target_id!r} forbids this follow")
        case "suspended":
            return UserSuspended(f"user {user_id!r} is suspended and cannot follow")
        case "target_suspended":
            return UserSuspended(f"user {target_id!r} is suspended and cannot be followed")
        case "erasing":
            return UserErasing(f"{user_id!r} or {target_id!r} is being erased")
        case "request_limit":
            return FollowRequestLimit(
                f"user {user_id!r} already has {settings.follow_requests_max} follow "
                "requests waiting for approval, the limit (FOLLOW_REQUESTS_MAX); one must "
                "be answered or withdrawn first"
            )
        case "block_limit":
            return BlockLimit(
                f"user {user_id!r} already blocks {settings.max_blocks} users, the limit "
                "(MAX_BLOCKS); unblock someone first"
            )
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


def _removal(user_id: str, follower_id: str) -> EdgeWrite:
    """The follower's unfollow of ``user_id``, which ``user_id`` asked for."""
    return EdgeWrite(WriteKind.UNFOLLOW, follower_id, user_id, cause=REMOVED)


def _refuse_self_removal(user_id: str, follower_ids: Sequence[str]) -> None:
    if user_id in follower_ids:
        raise SelfAction(f"user {user_id!r} cannot remove itself as a follower")


def _events_of(change: EdgeChange) -> list[GraphEvent]:
    return [change.event] if change.event is not None else []
