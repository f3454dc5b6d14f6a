"""What one run of the suite shares: its id, the users its tests made, and the check that
their mirrors equal Neo4j (each module's, and the suite's at its end)."""

from __future__ import annotations

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
    ordered = sorted(user_ids)
    drifts = []
    for start in range(0, len(ordered), 500):
        drifts += await backends.consistency.check(ordered[start : start + 500])
    assert not drifts, "mirror differs from Neo4j:\n" + "\n".join(map(str, drifts[:20]))
