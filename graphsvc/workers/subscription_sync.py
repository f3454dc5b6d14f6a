"""The work of subscriptions to moderation lists, as a kind of durable job: one job per
subscriber (``subscriptions:<user>``), due while any of its subscriptions carries :Syncing in
Neo4j, which every change of a subscription or of its list sets in its own transaction. So a
job a stopped process left is taken up by a worker, and a change made while a job runs makes
it run again.

Each step (``subscriptions/plan``) asks Neo4j what the subscription no longer wants and what
it wants and has not done, LIST_SUBSCRIPTION_BATCH of each, and records each new mute or
block it is about to make before making it. Then:

- **Lift.** Each mute or block to undo (no other subscription of the user imposes the same) is
  undone through the write order as an unmute or unblock is, not as one by hand (which would
  except the person); then what was lifted is forgotten. Undone first, forgotten second: a
  step cut short is done again, never leaving a mute or block nobody recorded.
- **Apply.** Each is made through the write order as a mute or block is (the blocks of a step
  in one group commit), not as one by hand (which would make it the user's own); then marked
  applied, or refused when a bound (MAX_BLOCKS, MAX_MUTES) kept it from being made.

A subscription whose step finds nothing to do is finished, unless it changed meanwhile (its
version moved: the next step plans again); a subscription that is gone and imposes nothing
more is deleted. Every step is idempotent. One job per user makes and undoes one user's mutes
and blocks one step after another, so two subscriptions never undo each other's work.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence

from graphsvc.adapters.neo4j.subscriptions import SubscriptionStore
from graphsvc.concurrency.jobs import Progress
from graphsvc.concurrency.loops import stop_if_asked
from graphsvc.domain.errors import GraphError
from graphsvc.domain.subscriptions import Action
from graphsvc.services.lists.subscriptions import JOB, sync_key
from graphsvc.services.mutes import Mutes
from graphsvc.services.relations import Relations
from graphsvc.settings import ListSettings, WorkerSettings

log = logging.getLogger(__name__)


class SubscriptionSync:
    name = JOB

    def __init__(
        self,
        store: SubscriptionStore,
        relations: Relations,
        mutes: Mutes,
        settings: ListSettings,
        worker: WorkerSettings,
    ) -> None:
        self._store = store
        self._relations = relations
        self._mutes = mutes
        self._batch = settings.list_subscription_batch
        self.lease_seconds = worker.worker_lease_seconds
        self.most = max(1, worker.worker_jobs // 2)

    async def due(self, limit: int) -> list[str]:
        return [sync_key(user) for user in await self._store.due_users(limit)]

    async def run(self, key: str, progress: Progress) -> None:
        user_id = key.removeprefix(f"{JOB}:")
        for list_id in await self._store.syncing(user_id):
            await self._sync(user_id, list_id, progress)

    async def _sync(self, user_id: str, list_id: str, progress: Progress) -> None:
        while True:
            stop_if_asked()  # a cancelled job (its lease lost) stops between steps
            now = time.time_ns() // 1_000
            plan = await self._store.plan(user_id, list_id, self._batch, now)
            if plan is None:
                return
            if plan.done:
                if await self._store.finish(user_id, list_id, plan.version):
                    return
                continue  # it changed meanwhile: plan again
            if plan.lift:
                await self._lift(user_id, list_id, plan.lift, progress)
            if plan.apply:
                await self._apply(user_id, list_id, plan.action, plan.apply, progress)

    async def _lift(
        self,
        user_id: str,
        list_id: str,
        lift: Sequence[tuple[str, Action, bool]],
        progress: Progress,
    ) -> None:
        undo = [(m, action) for m, action, wanted in lift if wanted]
        await _settled([self._undo(user_id, m, action) for m, action in undo])
        await self._store.release(user_id, list_id, [(m, action) for m, action, _ in lift])
        progress.add("lifted", len(undo))

    async def _apply(
        self,
        user_id: str,
        list_id: str,
        action: Action,
        people: Sequence[str],
        progress: Progress,
    ) -> None:
        outcomes = await _settled([self._do(user_id, m, action) for m in people])
        done = [m for m, refused in zip(people, outcomes, strict=True) if not refused]
        refused = [m for m, was in zip(people, outcomes, strict=True) if was]
        await self._store.applied(user_id, list_id, done, refused)
        progress.add("applied", len(done))
        if refused:
            progress.add("refused", len(refused))

    async def _do(self, user_id: str, target: str, action: Action) -> None:
        if action is Action.BLOCK:
            await self._relations.block(user_id, target, by_hand=False)
        else:
            await self._mutes.mute(user_id, target, notifications=True, by_hand=False)

    async def _undo(self, user_id: str, target: str, action: Action) -> None:
        if action is Action.BLOCK:
            await self._relations.unblock(user_id, target, by_hand=False)
        else:
            await self._mutes.unmute(user_id, target, by_hand=False)


async def _settled(calls: Sequence[Awaitable[object]]) -> list[bool]:
    """Run the writes together; for each, whether a rule refused it (a bound, an erasure).
    A store failure ends the step (it runs again from what Neo4j recorded)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    refused: list[bool] = []
    for result in results:
        if isinstance(result, GraphError) and result.status < 500:
            log.info("subscription write refused: %s", result)
            refused.append(True)
        elif isinstance(result, BaseException):
            raise result
        else:
            refused.append(False)
    return refused
