"""The sweep that forgets ended follows past CHANGES_RETENTION_DAYS, so the tombstones the
changes are read from stay bounded by what a retention's unfollows leave.

One worker a round: each takes the round's lease, which is left to lapse, so however many
workers run, the sweep runs once every CHANGES_EXPIRY_SECONDS. A round deletes batches of
CHANGES_EXPIRY_BATCH (one transaction each) until a batch comes back short."""

from __future__ import annotations

import logging
import time

from graphsvc.adapters.neo4j.changes import ChangeStore
from graphsvc.adapters.redis.leases import Leases
from graphsvc.domain.changes import DAY_US
from graphsvc.settings import ChangeSettings

log = logging.getLogger(__name__)
LEASE = "changes-expiry"


class ChangeExpiry:
    def __init__(self, store: ChangeStore, leases: Leases, settings: ChangeSettings) -> None:
        self._store = store
        self._retention_us = settings.changes_retention_days * DAY_US
        self._leases = leases
        self._batch = settings.changes_expiry_batch
        self.round_seconds = settings.changes_expiry_seconds

    async def round(self) -> bool:
        """One round of the loop: the sweep when this round is this worker's. Nothing waits
        after it (False): the sweep ran to its end."""
        if await self._leases.take(LEASE, self.round_seconds) is not None:
            await self.sweep()
        return False

    async def sweep(self) -> int:
        """Forget what the retention no longer keeps; how many tombstones went."""
        deleted = 0
        while True:
            before = time.time_ns() // 1000 - self._retention_us
            gone = await self._store.expire(before, self._batch)
            deleted += gone
            if gone < self._batch:
                break
        if deleted:
            log.info("forgot %d ended follows past their retention", deleted)
        return deleted
