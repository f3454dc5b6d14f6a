"""``ranker status|split|promote|report``: the suggestion ranker's models as an operator sees and
moves them (what is served and why, the A/B split, the last and next training, a rollback), and
how each version does online."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from graphsvc.ops.cli.failures import Refused
from graphsvc.ops.cli.running import command, say

app = typer.Typer(
    help="People you may know: train, evaluate, and the ranker's models (status, A/B split, "
    "promotion, online report).",
    no_args_is_help=True,
)

Version = Annotated[int, typer.Argument(metavar="VERSION", min=1, help="a stored model version")]


@command(app)
async def status() -> None:
    """What is served and why, whether it is stale, the split, the last and the next
    training, recent models."""
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.ranker import registry as ranker_registry
    from graphsvc.settings import get_settings

    async with open_operations(get_settings()) as operations:
        lines = await ranker_registry.status_lines(operations)
    for line in lines:
        say(line)


@command(app)
async def promote(version: Version) -> None:
    """Serve a stored version now (a rollback, or a model the training rejected)."""
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.ranker import registry as ranker_registry
    from graphsvc.settings import get_settings

    async with open_operations(get_settings()) as operations:
        say(await ranker_registry.promote(operations, version))


@command(app)
async def split(
    challenger: Annotated[
        int | None, typer.Option(metavar="VERSION", min=1, help="the challenger's version")
    ] = None,
    share: Annotated[
        float,
        typer.Option(
            metavar="FLOAT", min=0.0, max=1.0, help="share of users ranked by the challenger"
        ),
    ] = 0.5,
    off: Annotated[bool, typer.Option("--off", help="end the split")] = False,
) -> None:
    """Rank a share of users (by a hash of their id) with a challenger model, or end that."""
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.ranker import registry as ranker_registry
    from graphsvc.settings import get_settings

    if off == (challenger is not None):
        raise Refused("give --challenger VERSION (and --share) or --off")
    async with open_operations(get_settings()) as operations:
        if challenger is None:
            say(await ranker_registry.split_off(operations))
        else:
            say(await ranker_registry.split(operations, challenger, share))


@command(app)
async def report(
    as_json: Annotated[bool, typer.Option("--json", help="print JSON (for notebooks)")] = False,
) -> None:
    """Online figures per ranker version, beside each one's offline precision@10.

    Answers and items served, shows, follows and dismissals counted from recommendation ids
    (each follow once), follows per item shown and per item served, and the stored model's
    precision@10 on its validation users (none for the built-in default, version 0).
    """
    from graphsvc.ops.ranker import report as ranker_report
    from graphsvc.settings import get_settings

    model, figures = await ranker_report.online_figures(get_settings())
    if as_json:
        say(json.dumps(ranker_report.as_json(model, figures), indent=2, allow_nan=False))
        return
    for line in ranker_report.table(model, figures):
        say(line)
