"""Changes of a user's lists: who followed and who unfollowed, oldest first, from a moment or
a cursor, for a product's "new followers this week" or a service keeping its own copy.

A read lists changes up to CHANGES_SETTLE_SECONDS ago, not to the present: a change is
stamped by its follower's clock when its transaction starts, and commits a little later, so
a change younger than a transaction may live could still commit behind a cursor handed out
already. Behind that line nothing new can appear, and a walk (or a poll with the cursor,
which every page gives, even an empty one) sees every change once.

The changes of a list are read as the list is: the viewer must see the list (403
``network_hidden`` otherwise), inactive users are left out, and why a follow ended is told
only as ``domain.changes.shown_cause`` allows.
"""

from __future__ import annotations

import time
from datetime import datetime

from graphsvc.adapters.neo4j.changes import ChangeStore
from graphsvc.domain.changes import DAY_US, Change, ChangePage, shown_cause
from graphsvc.domain.cursor import CursorCodec, Position
from graphsvc.domain.errors import InvalidTimeRange, SinceTooOld
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import Viewer
from graphsvc.domain.time_window import micros_of
from graphsvc.services.paging import Pager
from graphsvc.services.privacy import PrivacyRules
from graphsvc.settings import ChangeSettings, PageSettings


class Changes:
    def __init__(
        self,
        store: ChangeStore,
        privacy: PrivacyRules,
        settings: ChangeSettings,
        lists: PageSettings,
    ) -> None:
        self._store = store
        self._privacy = privacy
        self._retention_us = settings.changes_retention_days * DAY_US
        self._settle_us = int(settings.changes_settle_seconds * 1_000_000)
        self._pager = Pager(lists)
        self._codec = CursorCodec(lists.cursor_secret)

    async def page(
        self,
        side: Side,
        user_id: str,
        *,
        since: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        viewer: Viewer,
    ) -> ChangePage:
        """The changes of the user's list on ``side`` at or after ``since`` (default: the
        oldest kept), or after the cursor, oldest first."""
        validate_user_id(user_id)
        limit = self._pager.limit(limit)
        if since is not None and cursor:
            raise InvalidTimeRange("give since or cursor, not both: a cursor knows where it is")
        scope = f"changes-{side.label}|{user_id}"
        now = time.time_ns() // 1000
        horizon = now - self._retention_us
        if cursor:
            start = self._codec.decode(scope, cursor)
        else:
            start = Position(horizon if since is None else micros_of(since), "")
        if start.since < horizon:
            days = self._retention_us // DAY_US
            raise SinceTooOld(
                f"changes are kept for {days} days (CHANGES_RETENTION_DAYS): ask since a "
                "moment after that, or walk the lists again"
            )
        await self._privacy.check_answer([(user_id, side)], viewer)
        found = await self._store.page(side, user_id, start, now - self._settle_us, limit + 1)
        items = [self._shown(c, user_id, side, viewer) for c in found[:limit]]
        last = Position(items[-1].at, items[-1].user_id) if items else start
        return ChangePage(items, self._codec.encode(scope, last), len(found) > limit)

    @staticmethod
    def _shown(change: Change, owner: str, side: Side, viewer: Viewer) -> Change:
        """The change as it leaves: the cause the viewer may know, and never who caused it."""
        return Change(
            change.at, change.user_id, change.op, shown_cause(change, owner, side, viewer)
        )
