"""``check``, ``rebuild``, ``reconcile``, ``relay`` and ``jobs``: the Redis mirror held against
Neo4j, the truth, and the background work a stopped service left. ``check`` and
``reconcile`` end with exit code 1 when drift is left, so a scheduler notices."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from graphsvc.ops.cli.failures import Refused
from graphsvc.ops.cli.running import command, say

if TYPE_CHECKING:
    from graphsvc.bootstrap import Operated


app = typer.Typer()

Users = Annotated[
    list[str] | None, typer.Argument(metavar="USER", help="user ids", show_default=False)
]
Everyone = Annotated[bool, typer.Option("--all", help="every user in Neo4j")]


async def _batches_of(
    parts: Operated, users: Sequence[str], everyone: bool
) -> AsyncIterator[list[str]]:
    size = parts.settings.mirror.rebuild_batch_users
    if everyone:
        async for batch in parts.maintenance.user_ids(size):
            yield batch
    else:
        for start in range(0, len(users), size):
            yield list(users[start : start + size])


def _named(users: list[str] | None, everyone: bool) -> list[str]:
    if not users and not everyone:
        raise Refused("name user ids or pass --all")
    return users or []


@command(app)
async def check(
    users: Users = None,
    everyone: Everyone = False,
    repair: Annotated[bool, typer.Option("--repair", help="rebuild users that drifted")] = False,
) -> None:
    """Compare the mirror with Neo4j.

    Exit code 1 when a user drifted and was not repaired.
    """
    from tqdm import tqdm

    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.data.loader import rebuild_mirror
    from graphsvc.settings import get_settings

    named = _named(users, everyone)
    found = checked = 0
    async with open_operations(get_settings()) as operations:
        with tqdm(desc="checked", unit="user") as bar:
            async for batch in _batches_of(operations, named, everyone):
                drifts = await operations.consistency.check(batch)
                for drift in drifts:
                    tqdm.write(str(drift))
                found += len(drifts)
                checked += len(batch)
                if repair and drifts:
                    drifted = sorted({d.user_id for d in drifts})
                    await rebuild_mirror(operations, drifted, progress=False)
                bar.update(len(batch))
    repaired = " (repaired)" if repair and found else ""
    say(f"checked {checked:,} users: {found} drifts{repaired}")
    if found and not repair:
        raise typer.Exit(1)


@command(app)
async def rebuild(users: Users = None, everyone: Everyone = False) -> None:
    """Rebuild the mirror."""
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.data.loader import rebuild_mirror
    from graphsvc.settings import get_settings

    named = _named(users, everyone)
    built = 0
    async with open_operations(get_settings()) as operations:
        async for batch in _batches_of(operations, named, everyone):
            built += await rebuild_mirror(operations, batch, progress=not everyone)
    say(f"rebuilt the mirror of {built:,} users")


@command(app)
async def reconcile(
    users: Users = None,
    everyone: Everyone = False,
    every: Annotated[
        float | None,
        typer.Option(metavar="SECONDS", help="repeat over recently written users"),
    ] = None,
    timelines: Annotated[
        bool,
        typer.Option(
            "--timelines",
            help="also check each user's home timeline against the rules, and repair it",
        ),
    ] = False,
) -> None:
    """Find and repair drift between the mirror and Neo4j.

    Exit code 1 when drift is left after the repair.
    """
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.repair.reconcile import reconcile as reconcile_users
    from graphsvc.ops.repair.reconcile import reconcile_recent
    from graphsvc.settings import get_settings

    if not users and not everyone and every is None:
        raise Refused("name user ids, or pass --all or --every")
    named = users or []
    async with open_operations(get_settings()) as operations:
        if every is not None:
            await reconcile_recent(operations.consistency, every, say=say)
            return
        report = await reconcile_users(
            operations.consistency, _batches_of(operations, named, everyone)
        )
        for drift in report.drifts:
            say(str(drift))
        say(report.line())
        left = report.left
        if timelines:
            home_timelines = await reconcile_users(
                operations.timeline_check,
                _batches_of(operations, named, everyone),
                desc="timelines",
            )
            for drift in home_timelines.drifts:
                say(str(drift))
            say("timelines: " + home_timelines.line())
            left = left or home_timelines.left
    if left:
        raise typer.Exit(1)


@command(app)
async def relay(
    grace: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="only events older than this (default: OUTBOX_GRACE_SECONDS; the API relays "
            "continuously, this is for operators)",
        ),
    ] = None,
) -> None:
    """Deliver outbox events to the event stream.

    It repairs the mirror writes that were lost on the way.
    """
    from tqdm import tqdm

    from graphsvc.bootstrap import open_operations
    from graphsvc.settings import get_settings

    bars: list[tqdm] = []  # shown once this process holds the relay's lease and relays

    def relayed(events: int) -> None:
        from tqdm import tqdm

        if not bars:
            bars.append(tqdm(desc="relayed", unit="event"))
        bars[0].update(events)

    async with open_operations(get_settings()) as operations:
        try:
            report = await operations.background.relay.once(grace=grace, progress=relayed)
        finally:
            for bar in bars:
                bar.close()
    if report.elsewhere:
        say("relayed nothing: another process holds the relay's lease and is relaying")
        return
    say(
        f"relayed {report.delivered:,} outbox events: {report.recovered:,} had lost their append "
        f"and were appended now, after repairing {report.repaired:,} users"
    )


@command(app)
async def jobs() -> None:
    """Finish status propagations and erasures left unfinished.

    Under the workers' leases: a job a running worker holds is left to it.
    """
    from tqdm import tqdm

    from graphsvc.bootstrap import open_operations
    from graphsvc.settings import get_settings

    async with open_operations(get_settings()) as operations:
        maintenance = operations.maintenance
        pending = await maintenance.pending_moderation()
        say(f"{len(pending)} unfinished job(s)")
        worker = operations.background.worker
        with tqdm(desc="jobs", unit="job") as bar:
            while await worker.take_moderation_jobs() or operations.core.jobs.running():
                await asyncio.sleep(0.5)
                bar.update(len(pending) - len(await maintenance.pending_moderation()) - bar.n)
        left = await maintenance.pending_moderation()
        say(f"done; {len(left)} job(s) still pending (held by a worker)" if left else "done")
