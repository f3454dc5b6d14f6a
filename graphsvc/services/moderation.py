"""Moderation: user statuses (active, suspended, spam), erasure of a user, and the
background jobs they start (``workers/moderation_jobs.py``), resumed by the workers.

A status change commits in Neo4j and is mirrored at once (lists hide the user right away);
the counts of the users it follows and of its followers follow in the background (the status
propagation). An erasure marks the user at once (no new follow, dismissal or interaction to
or from it is accepted) and revokes every API key bound to it, in the same transaction (this
process drops them from its cache at once), then removes its edges in the background.

Ids are reused: once erased, an id may be taken by a new user. So an erasure makes sure that
nothing from before it reaches the next user with the id: the revoked keys (the node is kept
until no API process may trust one from its cache, ``KeyRing.trust_seconds``; a key bound to
the id meanwhile is refused, or revoked by the last step), interactions buffered before it
(flushed, so dropped, while the user is still marked), dismissals (refused while it runs), and
the user's counts of shown suggestions (forgotten). Nothing can hold an erasure up: follows
are refused while it runs, and blocks, dismissals or interactions that race in are deleted
with the node.

The marks in Neo4j (:Erasing, and :Fanout, the stored name of a pending status propagation)
are the queue of that background work: a serving
process only marks, and a worker (``workers/worker.py``) finds the marks and runs the jobs;
a process that runs its own background work (the CLI, tests) starts them at once.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.concurrency.jobs import JobKind, Jobs
from graphsvc.domain.errors import InvalidStatus
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import STATUSES, UserState
from graphsvc.services.access import KeyRing
from graphsvc.services.writes import Writes
from graphsvc.wire.ids import quoted

ERASE, PROPAGATE = "erase", "fanout"  # a job's key: "erase:<user>", "fanout:<user>" (stored)


def job_key(user_id: str, *, erasing: bool) -> str:
    """A marked user's job, as the runner and its lease name it."""
    return f"{ERASE if erasing else PROPAGATE}:{user_id}"


class Moderation:
    def __init__(
        self,
        moderation: ModerationStore,
        writes: Writes,
        jobs: Jobs,
        work: JobKind,
        keys: KeyRing,
    ) -> None:
        self._moderation = moderation
        self._writes = writes
        self._jobs = jobs
        self._work = work
        self._keys = keys

    async def set_status(self, user_id: str, status: str) -> UserState:
        """Set a user's status; counts that depend on it follow in the background."""
        validate_user_id(user_id)
        if status not in STATUSES:
            raise InvalidStatus(
                f"status must be one of {', '.join(STATUSES)}, got {quoted(status)}"
            )
        async with self._writes.hold(user_id):
            version, propagating, event = await self._moderation.set_status(user_id, status)
            await self._writes.after_commit(
                events=[event] if event else [],
                invalidate=[user_id],
                status=(user_id, status != "active", version),
            )
        if propagating:
            await self.start_propagation(user_id)
        return UserState(status, propagating, False)

    async def user_state(self, user_id: str) -> UserState | None:
        validate_user_id(user_id)
        return await self._moderation.user_state(user_id)

    async def erase(self, user_id: str) -> bool:
        """Start erasing a user and all its edges, and revoke the keys bound to it (also when
        there is no such user); False when there is no such user."""
        validate_user_id(user_id)
        grace_us = round(self._keys.trust_seconds * 1_000_000)
        async with self._writes.hold(user_id):
            found, event, revoked = await self._moderation.erase_begin(user_id, grace_us)
            self._keys.forget(revoked)
            await self._writes.after_commit(events=[event] if event else [], invalidate=[user_id])
        if found:
            await self.start_erasure(user_id)
        return found

    async def start_propagation(self, user_id: str) -> None:
        await self._jobs.start(self._work, job_key(user_id, erasing=False))

    async def start_erasure(self, user_id: str) -> None:
        await self._jobs.start(self._work, job_key(user_id, erasing=True))

    async def progress(self, user_id: str) -> dict[str, int] | None:
        """What the user's running job (an erasure first) has done so far, by kind: from this
        process when it runs the job, else as its holder last noted it."""
        try:
            for erasing in (True, False):
                noted = await self._jobs.progress(job_key(user_id, erasing=erasing))
                if noted is not None:
                    return noted
        except REDIS_DOWN:  # the status is Neo4j's; the progress is only a note
            return None
        return None
