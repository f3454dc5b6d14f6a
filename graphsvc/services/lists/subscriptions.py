"""Subscriptions to moderation lists: a user mutes or blocks every member of a moderation list
it may see, kept current as the list changes, with per-person exceptions; unsubscribing
undoes exactly what the subscription did (``domain/subscriptions.py``).

The requests only record what is wanted, in Neo4j, and queue the subscriber's job; the work
(the mutes and blocks, through the write order as any mute or block, and their undoing) is the
job's (``workers/subscription_sync.py``), so a subscription to a list of 5,000 answers at once
and its state says ``applying`` until the work is done. A change of the list (members, its
privacy, its deletion, a block of the subscriber by its owner) makes the work due again in the
transaction of that change.

Privacy: a subscription is its subscriber's alone (no answer tells a list's owner or anyone
else who subscribes); a list the subscriber may no longer see lapses, and its name and owner
are no longer shown to it.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.subscriptions import SubscriptionStore
from graphsvc.concurrency.jobs import JobKind, Jobs
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import (
    ListNotFound,
    ListPurposeConflict,
    NotListMember,
    SubscriptionLimit,
    SubscriptionNotFound,
    UserErasing,
)
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.lists import validate_list_id
from graphsvc.domain.subscriptions import Action, Subscription
from graphsvc.services.paging import Pager
from graphsvc.settings import ListSettings, PageSettings

JOB = "subscriptions"


def sync_key(user_id: str) -> str:
    """The job of a subscriber's subscriptions (one per user, so its mutes and blocks are
    made and undone one step after another)."""
    return f"{JOB}:{user_id}"


class Excepted:
    """One person a subscription excepts, walked by id."""

    def __init__(self, user_id: str) -> None:
        self.user_id = user_id
        self.position = Position(0, user_id)


class ListSubscriptions:
    def __init__(
        self,
        store: SubscriptionStore,
        jobs: Jobs,
        kind: JobKind,
        settings: ListSettings,
        pages: PageSettings,
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._kind = kind
        self._most = settings.list_subscriptions_max
        self._pager = Pager(pages)

    async def subscribe(self, user_id: str, list_id: str, action: Action) -> Subscription:
        """Subscribe (or change the action of a subscription); its work is queued."""
        _valid(user_id, list_id)
        refused, _ = await self._store.subscribe(user_id, list_id, action, self._most)
        if refused == "not_found":
            raise ListNotFound(f"no list {list_id!r} this viewer may see")
        if refused == "curate":
            raise ListPurposeConflict(
                f"list {list_id!r} is a curate list: follow it to read it; only a moderation "
                "list is subscribed to"
            )
        if refused == "erasing":
            raise UserErasing(f"user {user_id!r} is being erased")
        if refused == "subscription_limit":
            raise SubscriptionLimit(
                f"user {user_id!r} has LIST_SUBSCRIPTIONS_MAX = {self._most} subscriptions"
            )
        await self._start(user_id)
        return await self.get(user_id, list_id)

    async def unsubscribe(self, user_id: str, list_id: str) -> bool:
        """End the subscription; its work undoes what it did. False: there was none."""
        _valid(user_id, list_id)
        removed = await self._store.unsubscribe(user_id, list_id)
        if removed:
            await self._start(user_id)
        return removed

    async def get(self, user_id: str, list_id: str) -> Subscription:
        _valid(user_id, list_id)
        found = await self._store.page(user_id, None, 1, list_id)
        if not found:
            raise SubscriptionNotFound(f"user {user_id!r} has no subscription to {list_id!r}")
        return found[0]

    async def subscriptions(
        self, user_id: str, limit: int | None, cursor: str | None
    ) -> tuple[list[Subscription], str | None]:
        validate_user_id(user_id)

        async def fetch(after: Position | None, wanted: int) -> list[Subscription]:
            return await self._store.page(user_id, after, wanted)

        return await self._pager.walk(f"subscriptions|{user_id}", limit, cursor, fetch)

    async def except_member(
        self, user_id: str, list_id: str, target: str, *, excepted: bool
    ) -> bool:
        """Except a member from the subscription, or end its exception; whether it changed."""
        _valid(user_id, list_id)
        validate_user_id(target, "target_id")
        outcome = await self._store.except_member(user_id, list_id, target, excepted)
        if outcome is None:
            raise SubscriptionNotFound(f"user {user_id!r} has no subscription to {list_id!r}")
        refused, changed = outcome
        if refused == "not_member":
            raise NotListMember(f"{target!r} is not a member of list {list_id!r}")
        if changed:
            await self._start(user_id)
        return changed

    async def exceptions(
        self, user_id: str, list_id: str, limit: int | None, cursor: str | None
    ) -> tuple[list[str], str | None]:
        await self.get(user_id, list_id)  # its 404

        async def fetch(after: Position | None, wanted: int) -> list[Excepted]:
            ids = await self._store.exceptions(
                user_id, list_id, after.user_id if after else None, wanted
            )
            return [Excepted(i) for i in ids]

        items, next_cursor = await self._pager.walk(
            f"exceptions|{user_id}|{list_id}", limit, cursor, fetch
        )
        return [i.user_id for i in items], next_cursor

    async def _start(self, user_id: str) -> None:
        await self._jobs.start(self._kind, sync_key(user_id))

    async def progress(self, user_id: str) -> dict[str, int] | None:
        return await self._jobs.progress(sync_key(user_id))


def _valid(user_id: str, list_id: str) -> None:
    validate_user_id(user_id)
    validate_list_id(list_id)
