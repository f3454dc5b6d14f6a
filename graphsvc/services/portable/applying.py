"""What an import's rows do, kind by kind, through the same use cases the API calls (every rule
of a follow, a block, a mute or a list change applies, and each refusal is named): a batch of
rows applied, and, for an import that overwrites, the user's entries it does not hold removed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from graphsvc.adapters.neo4j.portable import PortableStore
from graphsvc.domain.errors import GraphError
from graphsvc.domain.follow_options import OptionEdits
from graphsvc.domain.lists import Purpose
from graphsvc.domain.portable import Entry, Kind, Refused
from graphsvc.domain.privacy import Viewer
from graphsvc.services.lists.curated import Lists
from graphsvc.services.mutes import Mutes
from graphsvc.services.relations import Relations
from graphsvc.settings import ListSettings

Row = tuple[int, Entry]
# The reasons a refusal is reported under, by the error code the use case answered
LIMITS = {
    "following_limit",
    "request_limit",
    "follow_rate_limit",
    "block_limit",
    "mute_limit",
    "list_limit",
    "list_member_limit",
}
REASONS = {"blocked": "blocked", "user_suspended": "suspended", "user_erasing": "erasing"}


def reason_of(error: GraphError) -> str:
    if error.code in LIMITS:
        return "limit"
    if error.code.startswith("self"):
        return "self"
    return REASONS.get(error.code, error.code)


class Applier:
    def __init__(
        self,
        store: PortableStore,
        relations: Relations,
        mutes: Mutes,
        lists: Lists,
        settings: ListSettings,
    ) -> None:
        self._store = store
        self._relations = relations
        self._mutes = mutes
        self._lists = lists
        self._batch_max = settings.list_batch_max

    async def apply(self, user_id: str, kind: Kind, rows: Sequence[Row]) -> list[Refused]:
        """Apply the rows (each naming a user of the graph, or refused as unknown); the
        refused ones."""
        known = await self._store.known(sorted({entry.account for _, entry in rows}))
        refused = [
            Refused(n, e.account, "unknown_user", f"user {e.account!r} is not in the graph")
            for n, e in rows
            if e.account not in known
        ]
        rows = [(n, e) for n, e in rows if e.account in known]
        if kind is Kind.LISTS:
            return refused + await self._members(user_id, rows)
        action = self._action(user_id, kind)
        outcomes = await asyncio.gather(*(_attempt(action, n, e) for n, e in rows))
        return refused + [outcome for outcome in outcomes if outcome is not None]

    def _action(self, user_id: str, kind: Kind) -> Callable[[Entry], Awaitable[object]]:
        match kind:
            case Kind.FOLLOWING:
                return lambda e: self._relations.follow(
                    user_id,
                    e.account,
                    edits=OptionEdits(e.notify, e.reblogs, e.languages),
                    paced=False,
                )
            case Kind.BLOCKS:
                return lambda e: self._relations.block(user_id, e.account)
        return lambda e: self._mutes.mute(user_id, e.account, notifications=e.hide_notifications)

    async def _members(self, user_id: str, rows: Sequence[Row]) -> list[Refused]:
        """Each named list's members added (the list made, private, when the user has none
        of that name), LIST_BATCH_MAX a change; a change a rule refuses refuses its rows."""
        named = await self._list_ids(user_id)
        refused: list[Refused] = []
        by_list: dict[str, list[Row]] = {}
        for n, entry in rows:
            by_list.setdefault(entry.list_name, []).append((n, entry))
        for name, members in by_list.items():
            try:
                if name not in named:
                    made = await self._lists.create(
                        user_id, name, "", private=True, purpose=Purpose.CURATE
                    )
                    named[name] = made.id
                for start in range(0, len(members), self._batch_max):
                    chunk = members[start : start + self._batch_max]
                    try:
                        ids = [e.account for _, e in chunk]
                        await self._lists.change_members(user_id, named[name], ids, [])
                    except GraphError as error:
                        refused += [_refused(n, e, error) for n, e in chunk]
            except GraphError as error:  # the list could not be made
                refused += [_refused(n, e, error) for n, e in members]
        return refused

    async def _list_ids(self, user_id: str) -> dict[str, str]:
        """The user's curate lists by name (the newest of a name)."""
        owner, found, cursor = Viewer(user_id), {}, None
        while True:
            page, cursor = await self._lists.owned(user_id, owner, 100, cursor)
            for made in page:
                if made.purpose is Purpose.CURATE:
                    found.setdefault(made.name, made.id)
            if cursor is None:
                return found

    async def remove_unlisted(
        self, user_id: str, kind: Kind, listed: set[tuple[str, str]], most: int
    ) -> int:
        """For an overwrite: remove up to ``most`` of the user's entries of this kind the
        import does not hold (by (list name, account)); how many went."""
        current = await self._store.entries(kind, user_id, 10**9)
        extra = [e for e in current if (e.list_name, e.account) not in listed][:most]
        if kind is Kind.LISTS:
            by_list: dict[str, list[str]] = {}
            for entry in extra:
                by_list.setdefault(entry.list_id, []).append(entry.account)
            for list_id, members in by_list.items():
                for start in range(0, len(members), self._batch_max):
                    chunk = members[start : start + self._batch_max]
                    await self._lists.change_members(user_id, list_id, [], chunk)
            return len(extra)
        undo = {
            Kind.FOLLOWING: self._relations.unfollow,
            Kind.BLOCKS: self._relations.unblock,
            Kind.MUTES: self._mutes.unmute,
        }[kind]
        await asyncio.gather(*(undo(user_id, entry.account) for entry in extra))
        return len(extra)


async def _attempt(
    action: Callable[[Entry], Awaitable[object]], row: int, entry: Entry
) -> Refused | None:
    try:
        await action(entry)
    except GraphError as error:
        return _refused(row, entry, error)
    return None


def _refused(row: int, entry: Entry, error: GraphError) -> Refused:
    return Refused(row, entry.account, reason_of(error), error.message)
