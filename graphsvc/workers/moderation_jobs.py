"""The long moderation work that runs in the background: status propagations and erasures.

A status propagation follows a user's status change through its edges: the users it follows
get their active follower counts, its followers their active followings and friends. Its
stored name is fan-out (the label :Fanout, the ``moderation/fanout_*`` queries, the lease
``fanout:<user>``, the batch size FANOUT_BATCH_EDGES); in the code it is a propagation, so
that a fan-out is only a timeline's push.

Both work in batches of FANOUT_BATCH_EDGES edges, one short transaction each, so the API
keeps serving (and the users involved keep following) while they run. Each is marked in
Neo4j when it starts (:Fanout, :Erasing) and unmarked only when finished, so a job that a
stopped process left half done is taken up again by a worker. Every batch is safe to repeat, and
each batch's mirror work is recorded on the user's node in the batch's own transaction, so a
job that stops between a commit and its mirror write replays that write on resume. An error
ends the job's run; the job registry runs it again, which replays its last batch.

An erasure first closes the user's timeline and waits until its timeline jobs have ended;
each follow it removes then takes the followed user's posts out of the follower's home timeline, as
an unfollow does, and the rest of the user's timeline is forgotten once the node is gone
(``timeline_erasure.py``): nothing the user published reaches the next user with the id.
An erasure ends by flushing the interactions buffered so far (dropped: the user is marked),
then deletes the node with whatever blocks, dismissals or interactions raced in (up to a batch
of them), unless a follow is left (the batches run again) or a key bound to the user may still
be trusted from an API process's cache: then it waits that long (at most
``KeyRing.trust_seconds``, holding a job slot) and tries again. Nothing a client sends can
hold it up: follows, dismissals and interactions of a user being erased are refused or
dropped, and blocks that keep arriving are deleted with the node.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.neo4j.subscriptions import SubscriptionStore
from graphsvc.adapters.redis.impressions import ImpressionStore
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.privacy import PrivacyMirror
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.concurrency.jobs import Progress
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import DEFAULT_PRIVACY
from graphsvc.services.access import KeyRing
from graphsvc.services.moderation import ERASE, job_key
from graphsvc.services.mutes import Mutes
from graphsvc.services.writes import Writes
from graphsvc.settings import MirrorSettings, WorkerSettings
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.timeline_erasure import TimelineErasure

log = logging.getLogger(__name__)

_ROUNDS = 5  # a job repeats at most this often when concurrent writes keep adding work


class ModerationJobs:
    """Status propagations and erasures as a kind of durable job (``concurrency/jobs.py``):
    due while the user is marked. They take at most half of a worker's slots (at least one),
    so long erasures never starve the timeline jobs, which publishes wait on."""

    name = "moderation"

    def __init__(
        self,
        moderation: ModerationStore,
        snapshots: SnapshotStore,
        edges: EdgeStore,
        mirror: Mirror,
        statuses: StatusSet,
        privacy: PrivacyMirror,
        writes: Writes,
        settings: MirrorSettings,
        worker: WorkerSettings,
        flusher: InteractionFlusher,
        impressions: ImpressionStore,
        keys: KeyRing,
        mutes: Mutes,
        timelines: TimelineErasure,
        lists: ListStore,
        subscriptions: SubscriptionStore,
    ) -> None:
        self._moderation = moderation
        self._lists = lists
        self._subscriptions = subscriptions
        self._timelines = timelines
        self._mutes = mutes
        self._snapshots = snapshots
        self._edges = edges
        self._mirror = mirror
        self._statuses = statuses
        self._privacy = privacy
        self._writes = writes
        self._batch = settings.fanout_batch_edges
        self._journal_seconds = settings.mirror_journal_seconds
        self._flusher = flusher
        self._impressions = impressions
        self._keys = keys
        self.lease_seconds = worker.worker_lease_seconds
        self.most = max(1, worker.worker_jobs // 2)

    async def due(self, limit: int) -> list[str]:
        """Every marked user's job (the marks are few: each is a user's pending work)."""
        marked = await self._moderation.pending_work()
        return [job_key(user_id, erasing=erasing) for user_id, erasing in marked]

    async def run(self, key: str, progress: Progress) -> None:
        """The work of a marked user: its erasure, else its status propagation."""
        kind, _, user_id = key.partition(":")
        if kind == ERASE:
            await self.erase_user(user_id, progress)
        else:
            await self.propagate_status(user_id, progress)

    async def propagate_status(self, user_id: str, progress: Progress) -> None:
        """After a user turned active or inactive: re-flag its follows (the followed users'
        active follower counts change) and refresh the counts of its followers (their active
        followings and friends change), in the mirror as in Neo4j."""
        state = await self._moderation.propagation_state(user_id)
        if state is None:
            return
        status, version, unrefreshed = state
        # The status write of the request may be what a stopped process lost (it is versioned).
        await self._statuses.set_status(user_id, status != "active", version)
        await self._refresh(unrefreshed)
        for _ in range(_ROUNDS):
            await self._reflag_followings(user_id, progress)
            async for followers in self._moderation.follower_ids(user_id, self._batch):
                stop_if_asked()
                await self._refresh(followers)
                progress.add("followers", len(followers))
                log.info(
                    "propagation %s: %d followers refreshed", user_id, progress.notes["followers"]
                )
            async with self._writes.hold(user_id):
                if await self._moderation.propagation_done(user_id):
                    return
        log.warning(
            "propagation of %s still has work after %d rounds; it resumes later", user_id, _ROUNDS
        )

    async def _reflag_followings(self, user_id: str, progress: Progress) -> None:
        while True:
            stop_if_asked()  # a cancelled job (its lease lost) stops between batches
            async with self._writes.hold(user_id):
                followed = await self._moderation.reflag_following(user_id, self._batch)
            if not followed:
                return
            await self._refresh(followed)
            progress.add("following", len(followed))
            log.info(
                "propagation %s: %d followings re-flagged", user_id, progress.notes["following"]
            )

    async def _refresh(self, user_ids: Sequence[str]) -> None:
        if user_ids:
            await self._mirror.refresh_counts(await self._snapshots.read_counts(user_ids))

    async def erase_user(self, user_id: str, progress: Progress) -> None:
        """Remove a user's follows (each counterpart's counts, lists and home timeline follow in the
        mirror), its blocks, mutes both ways, interactions and dismissals, and then the user;
        its timeline is closed before and forgotten after."""
        pending = await self._moderation.erase_pending(user_id)
        if pending is None:  # not being erased (any more): the id may be another user's
            return
        await self._mirror_removals(pending)
        if not await self._timelines.close(user_id):
            log.warning("erase %s: its timeline jobs still run; it resumes later", user_id)
            return
        grace_us = round(self._keys.trust_seconds * 1_000_000)
        rounds = 0
        while rounds < _ROUNDS:
            for side in (Side.FOLLOWING, Side.FOLLOWERS):
                await self._erase_side(user_id, side, progress)
            await self._erase_others(user_id, progress)
            await self._flusher.flush_through()
            async with self._writes.hold(user_id):
                end = await self._moderation.erase_end(user_id, self._batch, grace_us)
            self._keys.forget(end.revoked)
            if end.done:
                if end.version is not None:
                    # A later user with this id starts out active, unhidden and public, with no
                    # shows.
                    await self._statuses.set_status(user_id, False, end.version)
                    await self._privacy.set(user_id, DEFAULT_PRIVACY, end.version)
                    await self._impressions.forget(user_id)
                    await self._mutes.forget(user_id)
                    await self._timelines.forget(user_id)
                    # The counts and lists are exact zeros now; let them go after the journal
                    # window.
                    await self._mirror.expire(user_id, self._journal_seconds)
                log.info("erase %s: done (%d edges)", user_id, progress.done)
                return
            if end.wait_seconds > 0:  # its revoked keys may still be trusted somewhere
                log.info("erase %s: keeping the id %.1f s for its keys", user_id, end.wait_seconds)
                await asyncio.sleep(end.wait_seconds)
                continue
            rounds += 1
        log.warning(
            "erasure of %s still has work after %d rounds; it resumes later", user_id, _ROUNDS
        )

    async def _erase_others(self, user_id: str, progress: Progress) -> None:
        """Delete the user's mutes by others (each muter's mirror following), its own lists,
        its subscriptions, then its blocks, own mutes, interactions, dismissals and memberships, in batches, each
        until a batch is not full: what arrived since goes with the node (``erase_end``), so
        blocks that keep coming cannot keep the erasure here."""
        steps = (
            ("mutes", self._mutes.erase_muted_by),
            ("lists", self._erase_lists),
            ("subscriptions", self._subscriptions.erase_subscribed),
            ("blocks", self._moderation.erase_blocks),
        )
        for what, step in steps:
            while True:
                stop_if_asked()
                deleted = await step(user_id, self._batch)
                if deleted:
                    progress.add(what, deleted)
                if deleted < self._batch:
                    break

    async def _erase_lists(self, user_id: str, batch: int) -> int:
        """One batch of the user's own lists and their memberships; the timelines of the
        lists that went are forgotten with them."""
        deleted, lists = await self._lists.erase_owned(user_id, batch)
        await self._timelines.lists_deleted(lists)
        return deleted

    async def _erase_side(self, user_id: str, side: Side, progress: Progress) -> None:
        while True:
            stop_if_asked()  # a cancelled job (its lease lost) stops between batches
            async with self._writes.hold(user_id):
                removed = await self._moderation.erase_batch(user_id, side, self._batch)
            if not removed:
                return
            await self._mirror_removals(removed)
            progress.add(side.label, len(removed))
            log.info("erase %s: %d %s removed", user_id, progress.notes[side.label], side.label)

    async def _mirror_removals(self, removed: Sequence[tuple[str, str, int]]) -> None:
        """The mirror's side of removed follows: counts and lists, and the followed user's
        posts out of the follower's home timeline (the erasure's follows make no unfollow
        events)."""
        if removed:
            await self._mirror.apply_many(await self._edges.removals(removed))
            await self._timelines.unfollowed(removed)
