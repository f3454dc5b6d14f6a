"""Users' privacy settings in Neo4j (``cypher/privacy.cypher``): properties of the user's node,
absent at their defaults, so the queries of other families test them where they walk."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore, event_id
from graphsvc.domain.model import GraphEvent
from graphsvc.domain.privacy import (
    DEFAULT_PRIVACY,
    CountsVisibility,
    Privacy,
    Visibility,
)


@dataclass(frozen=True, slots=True)
class PrivacyChange:
    """A committed ``set_privacy``: the settings before, the version, and the event (None
    when nothing changed); ``erasing``: refused, the user is being erased."""

    previous: Privacy
    version: int
    event: GraphEvent | None
    erasing: bool = False
    approving: bool = False  # it unlocked: every pending request is marked for approval


def privacy_params(privacy: Privacy) -> dict[str, Any]:
    """The node's properties for these settings (None at a default: no property)."""
    return {
        "pf": _visibility_property(privacy.followers_visibility),
        "pg": _visibility_property(privacy.following_visibility),
        "pc": None if privacy.counts_visibility is CountsVisibility.PUBLIC else "private",
        "nd": None if privacy.discoverable else True,
        "lk": True if privacy.locked else None,
    }


def _visibility_property(visibility: Visibility) -> str | None:
    return None if visibility is Visibility.PUBLIC else visibility.value


def privacy_of_row(row: Mapping[str, Any], prefix: str = "") -> Privacy:
    """Settings from a row's ``pf, pg, pc, nd, lk`` columns (each null at its default)."""
    return Privacy(
        Visibility(row[f"{prefix}pf"] or "public"),
        Visibility(row[f"{prefix}pg"] or "public"),
        CountsVisibility(row[f"{prefix}pc"] or "public"),
        not row[f"{prefix}nd"],
        bool(row[f"{prefix}lk"]),
    )


class PrivacyStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def set(self, user_id: str, privacy: Privacy) -> PrivacyChange:
        params = {"id": user_id, "event": event_id(), **privacy_params(privacy)}
        (row,) = await self._store.write("privacy/set_privacy", params)
        previous = privacy_of_row(row, "prev_")
        if row["erasing"]:
            return PrivacyChange(previous, row["version"], None, erasing=True)
        event = None
        if row["changed"]:
            event = GraphEvent(params["event"], "privacy", user_id, "", row["version"])
        return PrivacyChange(previous, row["version"], event, approving=bool(row["approving"]))

    async def of(self, user_ids: Sequence[str]) -> dict[str, tuple[Privacy, int]]:
        """Settings and versions of known users, read where writes go (an unknown user has
        the defaults, version 0)."""
        rows = await self._store.read("privacy/privacy_of", {"ids": list(user_ids)}, fresh=True)
        found = {row["id"]: (privacy_of_row(row), row["version"]) for row in rows}
        return {uid: found.get(uid, (DEFAULT_PRIVACY, 0)) for uid in user_ids}

    async def restricted(
        self, batch: int = 10_000
    ) -> AsyncIterator[list[tuple[str, Privacy, int]]]:
        """Every user with a setting off its default, with its version, ``batch`` at a time
        (a long job's walk: NEO4J_JOB_TIMEOUT_SECONDS a batch)."""
        after = ""
        while True:
            params = {"after": after, "limit": batch}
            rows = await self._store.read("privacy/restricted_users", params, fresh=True, job=True)
            if not rows:
                return
            yield [(row["id"], privacy_of_row(row), row["version"]) for row in rows]
            after = rows[-1]["id"]
