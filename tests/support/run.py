"""What one run of the suite shares: its id, the users its tests made, and the check that
their mirrors equal Neo4j (each module's, and each worker's at the end of its run)."""

from __future__ import annotations

import asyncio
import itertools
import uuid

from graphsvc.bootstrap import Services

RUN = uuid.uuid4().hex[:8]
_counter = itertools.count()
TOUCHED: set[str] = set()


def new_user_id(name: str = "u") -> str:
    """A user id unique to this run, remembered for the end-of-suite consistency check."""
    uid = f"t{RUN}.{next(_counter)}.{name}"
    TOUCHED.add(uid)
    return uid


async def assert_consistent(backends: Services, user_ids: set[str]) -> None:
    """The mirror of every one of these users equals Neo4j: checked 500 users at a time, four
    batches at once (a worker's last check runs while the other worker may be idle)."""
    ordered = sorted(user_ids)
    slots = asyncio.Semaphore(4)

    async def check(batch: list[str]) -> list:
        async with slots:
            return await backends.consistency.check(batch)

    batches = [ordered[start : start + 500] for start in range(0, len(ordered), 500)]
    drifts = [drift for found in await asyncio.gather(*map(check, batches)) for drift in found]
    assert not drifts, "mirror differs from Neo4j:\n" + "\n".join(map(str, drifts[:20]))
