"""Mutes: a user hides another's posts from its timeline, never has it suggested, and (when
asked) gets no new-follower notifications from it; the muted user can tell none of this.

A write follows the write order (``writes``): the in-process locks of both users, the commit
in Neo4j under the muter's lock (its clock ticks, the rules checked there, the private outbox
event created), then the mirror of the muter's mutes and its suggestion cache in one round
trip. A lost mirror write is repaired by the relay from the outbox event, which never reaches
the public stream. Reads filter by the mirror, built from Neo4j whenever it is missing, so a
flushed Redis never forgets a mute. An expired mute filters nothing from the moment it
expires; the muter's next mute write deletes it, and lists and snapshots leave it out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from graphsvc.adapters.neo4j.mutes import MuteStore
from graphsvc.adapters.redis.mutes import MuteMirror, MutesMissing
from graphsvc.domain.cursor import Position
from graphsvc.domain.errors import InvalidDuration, MuteLimit, SelfAction, UserErasing
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Page
from graphsvc.domain.mutes import MuteChange
from graphsvc.domain.subscriptions import Action, HandClaims
from graphsvc.services.paging import Pager
from graphsvc.services.writes import Writes
from graphsvc.settings import PageSettings, WriteSettings


def now_us() -> int:
    return time.time_ns() // 1_000


class Mutes:
    def __init__(
        self,
        store: MuteStore,
        mirror: MuteMirror,
        writes: Writes,
        settings: WriteSettings,
        pages: PageSettings,
        claims: HandClaims,
    ) -> None:
        self._store = store
        self._claims = claims
        self._mirror = mirror
        self._writes = writes
        self._settings = settings
        self._pager = Pager(pages)

    async def mute(
        self,
        user_id: str,
        target_id: str,
        *,
        notifications: bool = False,
        duration_seconds: int | None = None,
        by_hand: bool = True,
    ) -> MuteChange:
        """``user_id`` mutes ``target_id`` with these options (a repeat sets them again). A
        mute made by hand is the user's own: no subscription to a moderation list undoes
        it."""
        _guard_pair(user_id, target_id, "mute")
        longest = self._settings.mute_max_seconds
        if duration_seconds is not None and not 1 <= duration_seconds <= longest:
            raise InvalidDuration(
                f"duration_seconds must be between 1 and {longest} (MUTE_MAX_SECONDS), "
                f"got {duration_seconds}"
            )
        most = self._settings.max_mutes
        async with self._writes.hold(user_id, target_id):
            change = await self._store.mute(
                user_id,
                target_id,
                seconds=duration_seconds,
                notifications=notifications,
                most=most,
            )
            if change == "erasing":
                raise UserErasing(f"{user_id!r} or {target_id!r} is being erased")
            if change == "mute_limit":
                raise MuteLimit(
                    f"user {user_id!r} already mutes {most} users, the limit (MAX_MUTES); "
                    "unmute someone first"
                )
            assert isinstance(change, MuteChange)
            await self._writes.after_mute([change])
        if by_hand:
            await self._claims.claim(user_id, target_id, Action.MUTE, kept=True)
        return change

    async def unmute(self, user_id: str, target_id: str, *, by_hand: bool = True) -> bool:
        """True when a mute in effect was removed. Undone by hand, a mute a subscription
        made stays undone: the subscriptions that would make it again except the user."""
        _guard_pair(user_id, target_id, "unmute")
        async with self._writes.hold(user_id, target_id):
            change = await self._store.unmute(user_id, target_id)
            if change is None:
                return False
            await self._writes.after_mute([change])
        if change.changed and by_hand:
            await self._claims.claim(user_id, target_id, Action.MUTE, kept=False)
        return change.changed

    async def mutes(self, user_id: str, limit: int | None, cursor: str | None) -> Page:
        """The user's mutes in effect, newest first (items are ``Mute``)."""
        validate_user_id(user_id)
        now = now_us()

        async def fetch(after: Position | None, count: int) -> list[Any]:
            return await self._store.page(user_id, now, after, count)

        return await self._pager.page(f"mutes|{user_id}", limit, cursor, fetch)

    async def muted_among(
        self, user_id: str, others: Sequence[str], *, notifications: bool = False
    ) -> set[str]:
        """Which of ``others`` the user mutes now (``notifications``: only those whose
        notifications it mutes too); the user's mirror is built first when missing."""
        if not others:
            return set()
        try:
            return await self._mirror.muted_among(
                user_id, others, now_us(), notifications=notifications
            )
        except MutesMissing:
            await self.build([user_id])
            return await self._mirror.muted_among(
                user_id, others, now_us(), notifications=notifications
            )

    async def build(self, user_ids: Sequence[str]) -> None:
        """Install these users' mutes from Neo4j (a newer build already there is kept)."""
        for snapshot in await self._store.snapshots(user_ids, now_us()):
            await self._mirror.install(snapshot.user_id, snapshot.version, snapshot.entries)

    async def repair(self, user_ids: Sequence[str]) -> None:
        """Drop these users' mute mirrors and build them again from Neo4j (reconcile)."""
        await self._mirror.drop(user_ids)
        await self.build(user_ids)

    async def erase_muted_by(self, user_id: str, batch: int) -> int:
        """Remove a batch of the mutes of ``user_id`` (being erased) by others, each muter's
        mirror following; how many were removed."""
        changes = await self._store.erase_muted_by(user_id, batch)
        await self._writes.after_mute(changes)
        return len(changes)

    async def forget(self, user_id: str) -> None:
        """An erased user's own mute mirror goes (its mutes went with its relationships)."""
        await self._mirror.forget(user_id)


def _guard_pair(user_id: str, target_id: str, verb: str) -> None:
    validate_user_id(user_id, "user_id")
    validate_user_id(target_id, "target_id")
    if user_id == target_id:
        raise SelfAction(f"user {user_id!r} cannot {verb} itself")
