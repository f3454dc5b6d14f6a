"""Privacy: each user's settings, and the checks every read for a viewer makes with them.

Settings are written as every write is (``writes``): under the user's lock, committed in Neo4j
with their outbox event, then mirrored in Redis. Reads check them against the mirror, one
HMGET for any number of owners; a mirror that is missing (new, flushed) is rebuilt from Neo4j
before it is trusted, and with Redis unreachable the settings are read from Neo4j, so a
hidden list is never shown for want of a cache.

Policy (``domain/privacy.py`` holds the rules): the owner, and an admin or internal key that
names no viewer, see everything, without a read; a public list costs the read of its owner's
settings, which a page or counts read from the mirror takes along in its own round trip (a
``PrivacyProbe``: on the request path, a round trip costs as much as the read itself), and
which is checked before the answer leaves; a list shown to followers or mutuals costs one more
read, of the viewer's ties to the owner in Neo4j (a follow the mirror's capped hot list may
not hold), noted as a graph read so the caller's budget pays for it.

Every list answer is checked by one rule over all the lists it is read from
(``check_answer``): a page reads one, friends and the ``not_*_back`` filters both of the
owner's, common and familiar lists one of each of two users; each list hidden from the viewer
refuses the answer, for one settings read and at most one read of the ties, whatever the
number of lists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from graphsvc.adapters.neo4j.privacy import PrivacyStore
from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.redis.privacy import PrivacyMirror, PrivacyMissing, PrivacyProbe
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.request_notes import note_graph_read
from graphsvc.domain.errors import UserErasing
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import (
    NO_TIES,
    ListRule,
    Privacy,
    PrivacyEdit,
    Ties,
    Viewer,
    hidden_list,
    list_rules,
    may_see,
    may_see_counts,
    needs_ties,
    other_owners,
    tied_owners,
)
from graphsvc.services.follow_requests import FollowRequests
from graphsvc.services.writes import Writes


class PrivacyRules:
    def __init__(
        self,
        store: PrivacyStore,
        mirror: PrivacyMirror,
        edges: EdgeStore,
        writes: Writes,
        breaker: Breaker,
        requests: FollowRequests,
    ) -> None:
        self._store = store
        self._requests = requests
        self._mirror = mirror
        self._edges = edges
        self._writes = writes
        self._breaker = breaker
        self._loading = asyncio.Lock()

    # -- the settings -----------------------------------------------------------------------

    async def settings(self, user_id: str) -> Privacy:
        """A user's settings as Neo4j holds them now (the defaults for an unknown user)."""
        validate_user_id(user_id)
        return (await self._store.of([user_id]))[user_id][0]

    async def update(self, user_id: str, edit: PrivacyEdit) -> tuple[Privacy, Privacy]:
        """Apply a partial edit; the settings before and after. The edit is merged into the
        settings read under the user's lock, so two edits of different settings both stay.
        Unlocking approves every pending request, in the background (marked in the same
        transaction, so the work survives a crash)."""
        validate_user_id(user_id)
        async with self._writes.hold(user_id):
            current = (await self._store.of([user_id]))[user_id][0]
            wanted = edit.applied_to(current)
            change = await self._store.set(user_id, wanted)
            if change.erasing:
                raise UserErasing(f"user {user_id!r} is being erased")
            if change.event is not None:
                await self._writes.after_commit(
                    events=[change.event],
                    invalidate=[user_id],
                    privacy=(user_id, wanted, change.version),
                )
        if change.approving:
            await self._requests.start(user_id)
        return change.previous, wanted

    async def of(self, user_ids: Sequence[str]) -> dict[str, Privacy]:
        """The settings of these users, as reads check them: from the mirror (built first
        when it is missing), or from Neo4j while Redis cannot be reached."""

        async def mirrored() -> dict[str, Privacy]:
            try:
                return await self._mirror.of(user_ids)
            except PrivacyMissing:
                await self.load()
                return await self._mirror.of(user_ids)

        async def from_neo4j() -> dict[str, Privacy]:
            return {uid: p for uid, (p, _) in (await self._store.of(user_ids)).items()}

        return await self._breaker.read("privacy", mirrored, from_neo4j)

    async def load(self) -> int:
        """Build the mirror of the settings from Neo4j (when it is missing); how many users
        it installed. Concurrent readers wait for one build."""
        async with self._loading:
            try:
                await self._mirror.of([])
                return 0
            except PrivacyMissing:
                pass
            await self._mirror.start_build()
            loaded = 0
            async for batch in self._store.restricted():
                await self._mirror.load(batch)
                loaded += len(batch)
            await self._mirror.mark_built()
            return loaded

    async def repair(self, user_ids: Sequence[str], *, force: bool = True) -> None:
        """Mirror these users' settings from Neo4j (``force``: whatever version the mirror
        holds, as reconcile does; else the newer wins, as the relay's repairs do)."""
        if not user_ids:
            return
        for uid, (privacy, version) in (await self._store.of(user_ids)).items():
            await self._mirror.set(uid, privacy, version, force=force)

    # -- the checks ---------------------------------------------------------------------------

    async def check_answer(
        self,
        lists: Sequence[tuple[str, Side]],
        viewer: Viewer,
        probe: PrivacyProbe | None = None,
    ) -> None:
        """Refuse (403 ``network_hidden``, naming the setting) an answer read from these
        lists, (owner, side) each, when an owner's setting hides one of them from the viewer:
        the one check of every list answer, a page or one derived from several lists. One
        settings read for all the owners (none when ``probe``, taken along by a read of the
        list, holds them); the viewer's ties to the owners are read, once for all, only when
        they decide."""
        owners = other_owners(lists, viewer)
        if not owners:
            return
        rules = list_rules(lists, await self.of_probed(owners, probe), viewer)
        hidden = hidden_list(rules, viewer, {})
        if hidden is not None and viewer.user_id is not None and needs_ties(hidden.visibility):
            ties = await self.ties_among(viewer.user_id, tied_owners(rules))
            hidden = hidden_list(rules, viewer, ties)
        if hidden is not None:
            raise hidden.hidden()

    async def hidden_among(
        self, lists: Sequence[tuple[str, Side]], viewer: Viewer
    ) -> dict[tuple[str, str], ListRule]:
        """The rules of the lists, by (owner, side label), that hide them from the viewer,
        among many read one by one (an answer per list, where ``check_answer`` refuses one
        answer from them all): one settings read for all the owners, and one read of the
        viewer's ties to those whose setting needs them."""
        owners = other_owners(lists, viewer)
        if not owners:
            return {}
        rules = list_rules(lists, await self.of_probed(owners, None), viewer)
        tied = tied_owners(rules)
        ties = await self.ties_among(viewer.user_id, tied) if viewer.user_id and tied else {}
        return {
            (rule.owner, rule.side): rule
            for rule in rules
            if not may_see(rule.visibility, rule.owner, viewer, ties.get(rule.owner, NO_TIES))
        }

    async def _settings_of(self, owner: str, probe: PrivacyProbe | None) -> Privacy:
        """The owner's settings: from the probe when a read took it along, else read now."""
        return (await self.of_probed([owner], probe))[owner]

    def alongside(self, probe: PrivacyProbe) -> Callable[[Any], Callable[[Any], None]]:
        """What another read of Redis queues to take ``probe`` along (``of_probed``)."""
        return self._mirror.alongside(probe)

    async def of_probed(
        self, user_ids: Sequence[str], probe: PrivacyProbe | None
    ) -> dict[str, Privacy]:
        """``of``, answered by a probe of these users when a read took it along."""
        if probe is not None and set(user_ids) <= set(probe.user_ids):
            try:
                probed = self._mirror.probed(probe)
            except PrivacyMissing:
                probed = None  # read now, which builds the mirror first
            if probed is not None:
                return probed
        return await self.of(user_ids)

    async def counts_visible(
        self, owner: str, viewer: Viewer, probe: PrivacyProbe | None = None
    ) -> bool:
        if viewer.is_owner(owner):
            return True
        return may_see_counts(await self._settings_of(owner, probe), owner, viewer)

    async def ties_among(self, user_id: str, owners: Sequence[str]) -> dict[str, Ties]:
        """How the user relates to each of these owners, from Neo4j (a follow the mirror's
        capped hot list may not hold): a read of relationships per hundred owners (each
        answers that many at once), run together, none for none."""
        batches = [list(owners[start : start + 100]) for start in range(0, len(owners), 100)]
        for _ in batches:
            note_graph_read("privacy ties")
        found = await asyncio.gather(*(self._edges.relationships(user_id, b) for b in batches))
        return {rel.user_id: Ties(rel.following, rel.followed_by) for rels in found for rel in rels}
