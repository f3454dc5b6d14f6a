"""Reconciliation: find where the mirror drifted from Neo4j, repair it, and say how much.

A repair (``MirrorSync.repair``) rebuilds the drifted users' counts and lists from a Neo4j
snapshot (keeping their journals, so writes in flight are replayed) and writes their status
to the mirror again, as Neo4j says it, their mute mirrors from Neo4j's mutes and their
privacy settings from their nodes (whatever version the mirror holds); the users
are then checked once more, so the report says what is left (it should be nothing).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from graphsvc.builders.core import Core
from graphsvc.concurrency.loops import supervise
from graphsvc.ops.repair.consistency import Drift, check_users

log = logging.getLogger(__name__)


@dataclass
class Report:
    checked: int = 0
    found: int = 0  # drifts found
    repaired: int = 0  # users repaired
    left: int = 0  # drifts still there after the repair
    drifts: list[Drift] = field(default_factory=list)  # the first ones, for the operator

    def line(self) -> str:
        return (
            f"checked {self.checked:,} users: {self.found} drifts in {self.repaired} users, "
            f"repaired; {self.left} left after the repair"
        )


# Each takes the parts it reads: the core for the mirror, the whole services for timelines.
Check = Callable[[Any, Sequence[str]], Awaitable[list[Drift]]]
Repair = Callable[[Any, Sequence[str]], Awaitable[object]]


async def _repair_mirrors(core: Core, users: Sequence[str]) -> None:
    await core.mirror_sync.repair(users)
    await core.mutes.repair(users)
    await core.privacy.repair(users)


async def reconcile(
    parts: Any,
    batches: AsyncIterator[list[str]],
    *,
    progress: bool = True,
    check: Check = check_users,
    repair: Repair = _repair_mirrors,
    desc: str = "reconciled",
) -> Report:
    """Check each batch, repair the users found drifted, check them again (the mirror by
    default; the timelines with ``ops/repair/timeline_check.py``'s check and repair)."""
    report = Report()
    with tqdm(desc=desc, unit="user", disable=not progress) as bar:
        async for batch in batches:
            drifts = await check(parts, batch)
            report.checked += len(batch)
            if drifts:
                users = sorted({d.user_id for d in drifts})
                report.found += len(drifts)
                report.repaired += len(users)
                report.drifts += drifts[: max(0, 20 - len(report.drifts))]
                await repair(parts, users)
                report.left += len(await check(parts, users))
            bar.update(len(batch))
    return report


async def _listed(users: list[str], size: int) -> AsyncIterator[list[str]]:
    for start in range(0, len(users), size):
        yield users[start : start + size]


async def reconcile_recent(
    core: Core,
    every: float,
    *,
    rounds: int | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Every ``every`` seconds, reconcile the users written since the previous round (with a
    margin of one round), forever or for ``rounds`` rounds."""
    size = core.settings.mirror.rebuild_batch_users
    done = 0
    while rounds is None or done < rounds:
        users = sorted(await core.redis.mirror.written_since(2 * every))
        report = await reconcile(core, _listed(users, size), progress=False)
        say(report.line())
        await core.redis.mirror.forget_written_before(max(86_400.0, 4 * every))
        done += 1
        if rounds is None or done < rounds:
            await asyncio.sleep(every)


async def reconcile_rounds(core: Core, every: float, *, say: Callable[[str], None] = print) -> None:
    """WORKER_RECONCILE_SECONDS in `graphsvc worker`: a round of ``reconcile_recent`` each
    period, by whichever worker takes the period's lease (it lapses by itself, so there is one
    round a period however many workers run)."""

    async def one_round() -> bool:  # while a store is down, the next round covers its users
        if await core.redis.leases.take("reconcile", every * 0.9):
            await reconcile_recent(core, every, rounds=1, say=say)
        return False

    await supervise("reconcile", one_round, every)
