"""Long moderation use cases that run in the background: status fan-outs and erasures.

Both work in batches of FANOUT_BATCH_EDGES edges, one short transaction each, so the API
keeps serving (and the users involved keep following) while they run. Each is marked in
Neo4j when it starts (:Fanout, :Erasing) and unmarked only when finished, so a job that a
stopped process left half done resumes at the next start. Every batch is safe to repeat, and
each batch's mirror work is recorded on the user's node in the batch's own transaction, so a
job that stops between a commit and its mirror write replays that write on resume.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphsvc.background import Progress
from graphsvc.model import Side

if TYPE_CHECKING:
    from graphsvc.service import GraphService

log = logging.getLogger(__name__)

_ROUNDS = 5  # a job repeats at most this often when concurrent writes keep adding work


async def fan_out_status(service: GraphService, user_id: str, progress: Progress) -> None:
    """After a user turned active or inactive: re-flag its follows (the followed users' active
    follower counts change) and refresh the counts of its followers (their active followings
    and friends change), in the mirror as in Neo4j."""
    graph, mirror, batch = service.graph, service.mirror, service.settings.fanout_batch_edges
    state = await graph.fanout_state(user_id)
    if state is None:
        return
    status, version, unrefreshed = state
    # The status write of the request may be what a stopped process lost (it is versioned).
    await mirror.set_status(user_id, status != "active", version)
    await _refresh(service, unrefreshed)
    for _ in range(_ROUNDS):
        while True:
            async with service.writer(user_id):
                followed = await graph.fanout_following(user_id, batch)
            if not followed:
                break
            await _refresh(service, followed)
            progress.add("following", len(followed))
            log.info("fan-out %s: %d followings re-flagged", user_id, progress.notes["following"])
        async for followers in graph.follower_ids(user_id, batch):
            await _refresh(service, followers)
            progress.add("followers", len(followers))
            log.info("fan-out %s: %d followers refreshed", user_id, progress.notes["followers"])
        async with service.writer(user_id):
            if await graph.fanout_done(user_id):
                return
    log.warning("fan-out of %s still has work after %d rounds; it resumes later", user_id, _ROUNDS)


async def _refresh(service: GraphService, user_ids: Sequence[str]) -> None:
    if user_ids:
        await service.mirror.refresh_counts(await service.graph.read_counts(user_ids))


async def erase_user(service: GraphService, user_id: str, progress: Progress) -> None:
    """Remove a user's follows (each counterpart's counts and lists follow in the mirror), its
    blocks, and then the user."""
    graph, batch = service.graph, service.settings.fanout_batch_edges
    await _mirror_removals(service, await graph.erase_pending(user_id))
    for _ in range(_ROUNDS):
        for side in (Side.FOLLOWING, Side.FOLLOWERS):
            while True:
                async with service.writer(user_id):
                    removed = await graph.erase_batch(user_id, side, batch)
                if not removed:
                    break
                await _mirror_removals(service, removed)
                progress.add(side.label, len(removed))
                log.info("erase %s: %d %s removed", user_id, progress.notes[side.label], side.label)
        while deleted := await graph.erase_blocks(user_id, batch):
            progress.add("blocks", deleted)
        async with service.writer(user_id):
            done, version = await graph.erase_end(user_id)
        if done:
            if version is not None:
                # A later user with this id starts out active and unhidden.
                await service.mirror.set_status(user_id, False, version)
                # The counts and lists are exact zeros now; let them go after the journal window.
                await service.mirror.expire(user_id, service.settings.mirror_journal_seconds)
            log.info("erase %s: done (%d edges)", user_id, progress.done)
            return
    log.warning("erasure of %s still has work after %d rounds; it resumes later", user_id, _ROUNDS)


async def _mirror_removals(service: GraphService, removed: Sequence[tuple[str, str, int]]) -> None:
    # Errors propagate: the job stops, and its last batch is replayed when it runs again.
    if removed:
        await service.mirror.apply_many(await service.graph.removals(removed))
