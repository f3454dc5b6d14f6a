"""Account moves, as Mastodon's: the new account names the old one (an alias), then the old
account moves to it. The old account is marked moved at once; its followers are moved in the
background (``workers/move_jobs.py``): each follows the new account with its follow's options
(a request when the new account is locked) and leaves the old one. An account may move again
only MOVE_COOLDOWN_DAYS after its last move; a repeat of the move in effect changes nothing.
"""

from __future__ import annotations

import time
from typing import Protocol

from graphsvc.adapters.neo4j.moves import MoveStore
from graphsvc.domain.errors import AliasLimit, MoveRefused, SelfAction, UnknownUser
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import iso_utc
from graphsvc.domain.moves import NOT_MOVED, MoveState
from graphsvc.settings import MoveSettings

REASONS = {
    "not_aliased": "{new!r} does not name {old!r} as an account it is also known as (PUT "
    "/v1/users/{new}/aliases/{old} first)",
    "target_moved": "{new!r} moved to another account itself",
    "suspended": "{old!r} or {new!r} is suspended",
    "erasing": "{old!r} or {new!r} is being erased",
}


class MoveStarter(Protocol):
    async def start(self, key: str) -> None: ...


class Moves:
    def __init__(self, store: MoveStore, jobs: MoveStarter, settings: MoveSettings) -> None:
        self._store = store
        self._jobs = jobs
        self._settings = settings

    async def alias(self, user_id: str, old: str) -> bool:
        """``user_id`` names ``old`` as an account it is also known as; True when new."""
        _pair(user_id, old, "name itself as an alias")
        refused, created = await self._store.alias(user_id, old, self._settings.aliases_max)
        if refused == "unknown_user":
            raise UnknownUser(f"user {old!r} is not in the graph")
        if refused == "alias_limit":
            raise AliasLimit(
                f"user {user_id!r} names {self._settings.aliases_max} aliases, the limit "
                "(ALIASES_MAX); remove one first"
            )
        return created

    async def unalias(self, user_id: str, old: str) -> bool:
        _pair(user_id, old, "name itself as an alias")
        return await self._store.unalias(user_id, old)

    async def aliases(self, user_id: str) -> list[tuple[str, int]]:
        validate_user_id(user_id)
        return await self._store.aliases(user_id)

    async def move(self, old: str, new: str) -> tuple[MoveState, bool]:
        """Move ``old`` to ``new``; its state, and whether the move is new."""
        _pair(old, new, "move to itself")
        cooldown_us = int(self._settings.move_cooldown_days * 86_400 * 1_000_000)
        start = await self._store.begin(old, new, cooldown_us)
        match start.refused:
            case None:
                pass
            case "unknown_user":
                raise UnknownUser(f"user {old!r} or {new!r} is not in the graph")
            case "cooldown":
                retry_at = start.retry_at or 0
                wait = max(1, (retry_at - time.time_ns() // 1_000) // 1_000_000)
                raise MoveRefused(
                    f"{old!r} moved less than MOVE_COOLDOWN_DAYS "
                    f"({self._settings.move_cooldown_days:g}) ago; it may move again at "
                    f"{iso_utc(retry_at)}",
                    headers={"Retry-After": str(wait)},
                )
            case rule:
                raise MoveRefused(REASONS[rule].format(old=old, new=new))
        await self._jobs.start(old)  # a repeat starts it again: a lost job resumes
        return await self.state(old), start.started

    async def state(self, user_id: str) -> MoveState:
        validate_user_id(user_id)
        return await self._store.state(user_id) or NOT_MOVED


def _pair(user_id: str, other: str, verb: str) -> None:
    validate_user_id(user_id, "user_id")
    validate_user_id(other, "target_id")
    if user_id == other:
        raise SelfAction(f"user {user_id!r} cannot {verb}")
