"""The ranker an API process serves: the newest stored version of PYMK_MODEL_NAME, or the
built-in default when none was trained.

Policy: a process asks Neo4j for the newest version number at most every
PYMK_MODEL_REFRESH_SECONDS (one tiny read, on the request path but shared by concurrent
requests through a single flight), and reads the model only when the number changed. So a
model stored by `graphsvc train-pymk` is served by every process within that time, without a
restart. A stored model this version cannot read (other features) is logged and skipped: the
process keeps what it has rather than failing suggestions. If Neo4j cannot be asked, the
current ranker is kept; the suggestions themselves need Neo4j anyway.
"""

from __future__ import annotations

import json
import logging
import time

from graphsvc.adapters.neo4j.store import STORE_DOWN
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.concurrency.single_flight import SingleFlight
from graphsvc.domain.ranking import DEFAULT, Ranker
from graphsvc.settings import SuggestionSettings

log = logging.getLogger(__name__)


class RankerSource:
    def __init__(self, store: SuggestionStore, settings: SuggestionSettings) -> None:
        self._store = store
        self._name = settings.pymk_model_name
        self._every = settings.pymk_model_refresh_seconds
        self._current: Ranker = DEFAULT
        self._checked = float("-inf")
        self._skipped_version = 0
        self._flight = SingleFlight(concurrency=1, wait_seconds=10.0)

    async def ranker(self) -> Ranker:
        if time.monotonic() - self._checked < self._every:
            return self._current
        return await self._flight.run("refresh", self.refresh)

    async def refresh(self) -> Ranker:
        """Look for a newer model now."""
        self._checked = time.monotonic()
        try:
            version = await self._store.model_version(self._name)
        except STORE_DOWN as exc:
            log.warning(
                "cannot look for a newer ranker, keeping v%d: %s", self._current.version, exc
            )
            return self._current
        if version in (self._current.version, self._skipped_version) or version == 0:
            return self._current
        stored = await self._store.latest_model(self._name)
        if stored is None:
            return self._current
        version, body = stored
        try:
            self._current = Ranker.from_json({**json.loads(body), "version": version})
        except (ValueError, KeyError, TypeError) as exc:
            self._skipped_version = version
            log.error(
                "ranker %s v%d cannot be served, keeping v%d: %s",
                self._name,
                version,
                self._current.version,
                exc,
            )
        return self._current
