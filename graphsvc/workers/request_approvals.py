"""Approving every pending follow request of a user, in the background: when it unlocks, or
when it asks to approve them all.

The work is marked on the user's node in Neo4j (:Approving, by the transaction that unlocked
or asked), with the requests it covers (those made up to then) and how far it has got, so a
job that a stopped process left half done is taken up again by a worker from where it was.
It takes the requests oldest first, a batch at a time, and approves each as one approval
through the write order (``Relations.approve``: group commit, both users' locks, the rules of
a new follow checked again, the mirror and the event stream after the commit). A request the
rules refuse now (the requester reached MAX_FOLLOWING, was suspended, is being erased) is
passed over and stays pending, for its owner to answer. Approving twice changes nothing, so a
batch that runs again after a crash is harmless.
"""

from __future__ import annotations

import asyncio
import logging

from graphsvc.adapters.neo4j.requests import RequestStore
from graphsvc.concurrency.jobs import Progress
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.domain.errors import GraphError
from graphsvc.services.follow_requests import APPROVE, approvals_key
from graphsvc.services.relations import Relations
from graphsvc.settings import WorkerSettings

log = logging.getLogger(__name__)

BATCH = 100  # requests taken and approved together


class RequestApprovals:
    """Approvals of every pending request as a kind of durable job (``concurrency/jobs.py``):
    due while the user is marked."""

    name = "approvals"

    def __init__(
        self, requests: RequestStore, relations: Relations, worker: WorkerSettings
    ) -> None:
        self._requests = requests
        self._relations = relations
        self.lease_seconds = worker.worker_lease_seconds
        self.most = max(1, worker.worker_jobs // 2)

    async def due(self, limit: int) -> list[str]:
        return [approvals_key(user) for user in await self._requests.approving_users()]

    async def run(self, key: str, progress: Progress) -> None:
        user_id = key.removeprefix(f"{APPROVE}:")
        while True:
            stop_if_asked()  # a cancelled job (its lease lost) stops between batches
            batch = await self._requests.approvals_due(user_id, BATCH)
            if batch:
                await self._approve(user_id, [requester for _, requester in batch], progress)
                since, last = batch[-1]
                await self._requests.approve_all_step(user_id, since, last, done=False)
            if len(batch) < BATCH and await self._requests.approve_all_step(
                user_id, None, None, done=True
            ):
                log.info("approvals %s: done (%d approved)", user_id, progress.done)
                return

    async def _approve(self, user_id: str, requesters: list[str], progress: Progress) -> None:
        """Approve a batch together (one group commit); a refusal passes its request over,
        a store failure ends the run (it runs again from the last noted position)."""
        results = await asyncio.gather(
            *(self._relations.approve(user_id, requester) for requester in requesters),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, GraphError):
                progress.add("refused", 1)
            elif isinstance(result, BaseException):
                raise result
            else:
                progress.add("approved", 1)
