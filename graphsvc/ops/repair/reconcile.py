"""Reconciliation: find where the mirror (or the home timelines) drifted, repair it, and
say how much. The check and the repair are the services' (``services/consistency.py``,
``services/timeline_check.py``); the drifted users are checked once more after their repair,
so the report says what is left (it should be nothing).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tqdm import tqdm

from graphsvc.concurrency.loops import supervise
from graphsvc.domain.drift import Drift
from graphsvc.services.consistency import Consistency

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


class Checked(Protocol):
    """What a reconciliation walks: the mirror's ``Consistency`` or the ``TimelineCheck``."""

    async def check(self, user_ids: Sequence[str]) -> list[Drift]: ...

    async def repair(self, user_ids: Sequence[str]) -> object: ...


async def reconcile(
    checked: Checked,
    batches: AsyncIterator[list[str]],
    *,
    progress: bool = True,
    desc: str = "reconciled",
) -> Report:
    """Check each batch, repair the users found drifted, check them again."""
    report = Report()
    with tqdm(desc=desc, unit="user", disable=not progress) as bar:
        async for batch in batches:
            drifts = await checked.check(batch)
            report.checked += len(batch)
            if drifts:
                users = sorted({d.user_id for d in drifts})
                report.found += len(drifts)
                report.repaired += len(users)
                report.drifts += drifts[: max(0, 20 - len(report.drifts))]
                await checked.repair(users)
                report.left += len(await checked.check(users))
            bar.update(len(batch))
    return report


async def _listed(users: list[str], size: int) -> AsyncIterator[list[str]]:
    for start in range(0, len(users), size):
        yield users[start : start + size]


async def reconcile_recent(
    consistency: Consistency,
    every: float,
    *,
    rounds: int | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Every ``every`` seconds, reconcile the users written since the previous round (with a
    margin of one round), forever or for ``rounds`` rounds."""
    done = 0
    while rounds is None or done < rounds:
        users = await consistency.written_since(2 * every)
        report = await reconcile(
            consistency, _listed(users, consistency.batch_users), progress=False
        )
        say(report.line())
        await consistency.forget_written_before(max(86_400.0, 4 * every))
        done += 1
        if rounds is None or done < rounds:
            await asyncio.sleep(every)


async def reconcile_rounds(
    consistency: Consistency,
    every: float,
    *,
    say: Callable[[str], None] = print,
) -> None:
    """WORKER_RECONCILE_SECONDS in `graphsvc worker`: a round of ``reconcile_recent`` each
    period, by whichever worker takes the period's lease (it lapses by itself, so there is one
    round a period however many workers run)."""

    async def one_round() -> bool:  # while a store is down, the next round covers its users
        if await consistency.take_round(every * 0.9):
            await reconcile_recent(consistency, every, rounds=1, say=say)
        return False

    await supervise("reconcile", one_round, every)
