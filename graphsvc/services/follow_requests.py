"""Follow requests: what a locked user's would-be followers asked, pending its answer.

A follow of a locked user (``privacy``: ``locked``) is committed as a pending request rather
than a follow (``relations/follow``); the owner approves it (it becomes a follow, the rules of a
new follow checked again) or rejects it, and the requester may withdraw it (an unfollow). The
writes go through ``Relations``, the one write order; this module holds the reads and the
approval of every request at once, which runs in the background as a durable job
(``workers/request_approvals.py``), as unlocking starts it too.

Policy: a request is in no list and no count of followers, fans out no post and feeds no
suggestion; only its owner reads the requests made to it (suspended requesters hidden, spam
ones in the shadow), and only the requester those it made (``require_owner``). The owner's
counts include how many wait.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.requests import RequestStore
from graphsvc.concurrency.jobs import JobKind, Jobs
from graphsvc.domain.cursor import Position
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Entry, Page
from graphsvc.domain.privacy import Viewer, require_owner
from graphsvc.services.paging import Pager
from graphsvc.settings import PageSettings

APPROVE = "approve"  # a job's key: "approve:<user>" (its lease, its progress)


def approvals_key(user_id: str) -> str:
    return f"{APPROVE}:{user_id}"


class FollowRequests:
    def __init__(
        self, store: RequestStore, jobs: Jobs, approvals: JobKind, settings: PageSettings
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._approvals = approvals
        self._pager = Pager(settings)

    async def incoming(
        self, user_id: str, viewer: Viewer, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        """The requests made to the user, newest first (its own list only)."""
        return await self._page(
            "incoming_page", "requests-incoming", user_id, viewer, limit, cursor
        )

    async def sent(
        self, user_id: str, viewer: Viewer, limit: int | None = None, cursor: str | None = None
    ) -> Page:
        """The requests the user made and that wait, newest first (its own list only)."""
        return await self._page("sent_page", "requests-sent", user_id, viewer, limit, cursor)

    async def _page(
        self,
        name: str,
        scope: str,
        user_id: str,
        viewer: Viewer,
        limit: int | None,
        cursor: str | None,
    ) -> Page:
        validate_user_id(user_id)
        require_owner(viewer, user_id, "follow requests")

        async def fetch(after: Position | None, wanted: int) -> list[Entry]:
            return await self._store.page(name, user_id, after, wanted)

        return await self._pager.page(f"{scope}|{user_id}", limit, cursor, fetch)

    async def pending(self, user_id: str) -> int:
        """How many requests wait for the user's answer (from requesters it is shown)."""
        return await self._store.pending(user_id)

    async def approve_all(self, user_id: str) -> int:
        """Approve every request made to the user up to now, in the background; how many
        wait, counted as ``pending`` counts them (the requests its owner is shown), so the
        answer agrees with the incoming list and the counts (the job's progress is in
        ``GET .../status``)."""
        validate_user_id(user_id)
        marked, pending = await self._store.approve_all_begin(user_id)
        if marked:
            await self.start(user_id)
        return pending

    async def start(self, user_id: str) -> None:
        """Run the user's marked approvals (here, or leave them to a worker)."""
        await self._jobs.start(self._approvals, approvals_key(user_id))

    async def progress(self, user_id: str) -> dict[str, int] | None:
        return await self._jobs.progress(approvals_key(user_id))
