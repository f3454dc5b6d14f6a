"""The request path's reads of the mirror (``mirror.py`` describes its keys): exact counts in
one round trip, and pages of a hot list with inactive users left out.

On a single Redis a page is one script that also filters out inactive users, sent on the
multiplexed connections of the hot reads (``multiplexed.py``); on a Redis Cluster the inactive set
lives in another slot, so the page script returns the raw entries and the filter is a second
round trip (SMISMEMBER).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.commands.core import AsyncScript

from graphsvc.adapters.redis.client import is_cluster
from graphsvc.adapters.redis.mirror import COUNT_FIELDS, Mirror
from graphsvc.adapters.redis.multiplexed import Multiplexed
from graphsvc.adapters.redis.privacy import PrivacyMirror, PrivacyProbe
from graphsvc.adapters.redis.scripts import register
from graphsvc.adapters.redis.statuses import StatusesMissing, StatusSet
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Counts, Entry, Side


@dataclass(frozen=True, slots=True)
class HotPage:
    """Entries served by the hot list; ``truncated`` means older entries live only in Neo4j."""

    entries: list[Entry]
    truncated: bool


class MirrorReads:
    def __init__(
        self,
        mirror: Mirror,
        statuses: StatusSet,
        privacy: PrivacyMirror,
        *,
        multiplexed: Multiplexed | None = None,
        split_page: bool | None = None,
    ) -> None:
        """``multiplexed``: the connections to send the reads on (None: the client's
        pool). ``split_page``: filter pages in a second round trip (default: on a cluster
        only, where it must; tests also run it on a single Redis)."""
        self._mirror = mirror
        self._redis = mirror.client
        self._statuses = statuses
        self._privacy = privacy
        self._split_page = is_cluster(mirror.client) if split_page is None else split_page
        self._page = register(mirror.client, "page")
        self._counts = register(mirror.client, "counts")
        self._multiplexed = multiplexed

    async def _script(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        if self._multiplexed is not None:
            return await self._multiplexed.script(script, keys, args)
        return await script(keys=keys, args=args)

    async def counts(self, user_id: str, probe: PrivacyProbe | None = None) -> Counts | None:
        """Exact counts in one O(1) round trip; None when the user is cold. ``probe``: the
        user's privacy settings are read in the same round trip (a pipeline)."""
        key = self._mirror.key("m", user_id)
        if probe is None:
            if self._multiplexed is not None:
                values = await self._multiplexed.call("HMGET", key, *COUNT_FIELDS)
            else:
                values = await self._redis.hmget(key, *COUNT_FIELDS)
        elif not self._split_page:  # one server: one script reads both
            keys, args = [key, self._privacy.key], [user_id, *COUNT_FIELDS]
            reply = await self._script(self._counts, keys, args)
            values, built = reply[: len(COUNT_FIELDS)], reply[-1]
            probe.reply = [reply[len(COUNT_FIELDS)], "1" if built else None]
        else:  # a cluster: the two slots in one pipeline
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hmget(key, *COUNT_FIELDS)
                self._privacy.queue_probe(pipe, probe)
                values, probe.reply = await pipe.execute()
        if any(value is None for value in values):
            return None
        return Counts(*map(int, values))

    async def page(
        self,
        user_id: str,
        side: Side,
        after: Position | None,
        wanted: int,
        probe: PrivacyProbe | None = None,
    ) -> HotPage | None:
        """Up to ``wanted`` active entries strictly after ``after``; None when the list is
        cold. Raises StatusesMissing when the inactive set must be built first. ``probe``:
        the owner's privacy settings are read in the same round trip (on a single Redis; a
        cluster's page leaves the probe unread)."""
        if self._split_page:
            return await self._page_then_filter(user_id, side, after, wanted)
        keys = [*self._mirror.side_keys(user_id, side)[:2], self._statuses.inactive_key]
        args = self._page_args(side, after, wanted)
        if probe is not None:
            keys.append(self._privacy.key)
            args.append(probe.user_ids[0])
        reply = await self._script(self._page, keys, args)
        if reply[0] == 0:
            return None
        if reply[0] == 2:
            raise StatusesMissing
        first = 2
        if probe is not None:
            probe.reply = [reply[2], "1" if reply[3] else None]
            first = 4
        return HotPage(self._entries(reply[first:]), truncated=bool(reply[1]))

    @staticmethod
    def _page_args(side: Side, after: Position | None, count: int) -> list[Any]:
        return [side.value, after.since if after else "+inf", after.user_id if after else "", count]

    @staticmethod
    def _entries(flat: Sequence[Any]) -> list[Entry]:
        """The page script's (member, score) pairs; its scores are integer replies."""
        pairs = iter(flat)
        return [Entry(user_id, since) for user_id, since in zip(pairs, pairs, strict=True)]

    async def _page_then_filter(
        self, user_id: str, side: Side, after: Position | None, wanted: int
    ) -> HotPage | None:
        """The cluster's page: raw entries from the user's slot, then which of them are
        inactive from the {status} slot; scanned on past inactive ones, as the script does."""
        keys = self._mirror.side_keys(user_id, side)[:2]
        found: list[Entry] = []
        cursor, ask = after, wanted
        while True:
            reply = await self._page(keys=keys, args=self._page_args(side, cursor, ask))
            if reply[0] == 0:
                return None
            raw = self._entries(reply[2:])
            hidden = await self._statuses.inactive_among([e.user_id for e in raw])
            if hidden is None:
                raise StatusesMissing
            found += [e for e in raw if e.user_id not in hidden][: wanted - len(found)]
            if len(found) >= wanted or len(raw) < ask:
                return HotPage(found, truncated=bool(reply[1]))
            cursor, ask = raw[-1].position, max(2 * (wanted - len(found)), 32)
