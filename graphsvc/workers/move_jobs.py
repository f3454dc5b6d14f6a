"""Moves in the background: an account that moved (``services/moves.py``) has its followers
moved to the new account, MOVE_BATCH a step, durable across restarts.

The record is the old account's mark in Neo4j (``:Moving``, as a moderation job's): the
workers claim the marked accounts (``moves/moving``) and run each under a lease
(``concurrency/jobs.py``). A step reads the next followers in id order (``moves/followers_page``,
a seek) and, for each, follows the new account with the options of its follow of the old one
(a request when the new account is locked), then ends its follow of the old one (an unfollow,
``cause=moved``). A follow the rules refuse (a block, a limit) leaves that follower following
the old account. A run that stops is run again from the first follower: those moved already
follow the old account no more, and every write is idempotent, so nothing is lost or done twice.
The last step ends the mark and puts the old account's severance notice (``severed``: how many
followers the move took) on the change feed.
"""

from __future__ import annotations

import asyncio
import logging

from graphsvc.adapters.neo4j.moves import MoveStore
from graphsvc.concurrency.jobs import Jobs, Progress
from graphsvc.domain.errors import GraphError
from graphsvc.domain.follow_options import FollowOptions, OptionEdits
from graphsvc.services.relations import Relations
from graphsvc.services.writes import Writes
from graphsvc.settings import MoveSettings, WorkerSettings

log = logging.getLogger(__name__)


class MoveJobs:
    """Moves as a kind of durable job (``concurrency/jobs.py``)."""

    name = "moves"

    def __init__(
        self,
        store: MoveStore,
        relations: Relations,
        writes: Writes,
        jobs: Jobs,
        settings: MoveSettings,
        worker: WorkerSettings,
    ) -> None:
        self._store = store
        self._relations = relations
        self._writes = writes
        self._jobs = jobs
        self._batch = settings.move_batch
        self.most = worker.worker_jobs
        self.lease_seconds = worker.worker_lease_seconds  # as a moderation job's: a Neo4j mark

    async def start(self, key: str) -> None:
        """Run the move here when this process runs its own work (its mark is its record)."""
        await self._jobs.start(self, key)

    async def due(self, limit: int) -> list[str]:
        return await self._store.moving(limit)

    async def run(self, key: str, progress: Progress) -> None:
        state = await self._store.state(key)
        if state is None or not state.moving or state.moved_to is None:
            return
        new, after = state.moved_to, ""
        while True:
            page = await self._store.followers(key, after, self._batch)
            moved = await asyncio.gather(*(self._move(f, key, new, o) for f, o in page))
            progress.add("followers", sum(moved))
            if len(page) < self._batch:
                break
            after = page[-1][0]
        notice = await self._store.finish(key)
        if notice is not None:
            await self._writes.after_commit(events=[notice])

    async def _move(self, follower: str, old: str, new: str, options: FollowOptions) -> bool:
        if follower == new:
            return False  # the new account followed the old one: it stays so
        edits = OptionEdits(options.notify, options.reblogs, options.languages)
        try:
            await self._relations.follow(follower, new, edits=edits, paced=False)
        except GraphError as error:  # refused: it keeps following the old account
            log.info("move %s -> %s: %s stays (%s)", old, new, follower, error.code)
            return False
        return await self._relations.moved_away(follower, old)
