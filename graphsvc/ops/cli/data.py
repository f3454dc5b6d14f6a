"""``load``, ``gen``, ``demo`` and ``export``: graphs into the service, from a file, a generator
or the demo's own, and the whole graph out of it. A file is parsed and validated whole before
anything is written; a load ends saying when the suggestion ranker is trained on the graph it
made; an export writes Parquet files as the graph streams out of Neo4j."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from graphsvc.ops.cli.running import command, say
from graphsvc.ops.data.generate import SIZES

if TYPE_CHECKING:
    from graphsvc.ops.data.edge_files import Edges


app = typer.Typer()

Size = StrEnum("Size", {name: name for name in sorted(SIZES)})  # the generator's sizes
DEFAULT_SIZE = Size("S")
NoProgress = Annotated[bool, typer.Option("--no-progress", help="no progress bars")]


async def _load_edges(edges: Edges, progress: bool, online: bool = False) -> None:
    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.data.loader import load as load_into
    from graphsvc.ops.ranker.registry import load_line
    from graphsvc.settings import get_local_server_settings, get_settings

    say(edges.summary())
    settings, local = get_settings(), get_local_server_settings()
    async with open_operations(settings) as operations:
        report = await load_into(
            operations, edges, local=local, progress=progress, online=online, say=say
        )
        say(
            f"loaded {report.edges:,} edges ({report.created:,} new) between "
            f"{report.users:,} users in {report.seconds:.1f}s: "
            f"{report.edges_per_second:,.0f} edges/s"
        )
        say(await load_line(operations))


@command(app)
async def load(
    file: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, metavar="FILE", help="edge list or CSV file"),
    ],
    undirected: Annotated[
        bool, typer.Option("--undirected", help="each line follows both ways")
    ] = False,
    prefix: Annotated[
        str, typer.Option(metavar="TEXT", help="put before every id (e.g. 'fb.')")
    ] = "",
    online: Annotated[
        bool,
        typer.Option(
            "--online", help="use transactions even when the offline importer could be used"
        ),
    ] = False,
    no_progress: NoProgress = False,
) -> None:
    """Bulk-load an edge list or CSV file (then say when the ranker trains on it)."""
    from graphsvc.ops.data.edge_files import read_edge_file

    edges = read_edge_file(file, undirected=undirected, prefix=prefix)
    await _load_edges(edges, not no_progress, online)


@command(app)
def gen(
    out: Annotated[Path, typer.Option(metavar="PATH", help="the edge list to write")],
    size: Annotated[Size, typer.Option(metavar="[" + "|".join(Size) + "]")] = DEFAULT_SIZE,
    seed: Annotated[
        int,
        typer.Option(
            metavar="INTEGER",
        ),
    ] = 1,
) -> None:
    """Write a synthetic power-law follow graph (edge list)."""
    from graphsvc.ops.data.generate import write_edge_file

    started = time.perf_counter()
    written = write_edge_file(out, SIZES[size.value], seed=seed)
    say(f"wrote {written:,} edges to {out} in {time.perf_counter() - started:.1f}s")


@command(app)
async def demo(
    users: Annotated[
        int,
        typer.Option(
            metavar="INTEGER",
        ),
    ] = 3000,
    seed: Annotated[
        int,
        typer.Option(
            metavar="INTEGER",
        ),
    ] = 7,
    no_progress: NoProgress = False,
) -> None:
    """Load the generated demo graph."""
    from graphsvc.ops.data.demo import demo_edges

    await _load_edges(demo_edges(users, seed), not no_progress)


class ExportFormat(StrEnum):
    PARQUET = "parquet"


@command(app)
async def export(
    directory: Annotated[
        Path, typer.Argument(file_okay=False, metavar="DIR", help="where the files go")
    ],
    format: Annotated[
        ExportFormat, typer.Option("--format", help="the files' format")
    ] = ExportFormat.PARQUET,
    no_progress: NoProgress = False,
) -> None:
    """Write the whole graph (follows at one cut, blocks, mutes, users) and a manifest."""
    from tqdm import tqdm

    from graphsvc.bootstrap import open_operations
    from graphsvc.ops.data.export import export_parquet
    from graphsvc.settings import get_settings

    settings = get_settings()
    bar = tqdm(unit=" rows", disable=no_progress, desc="export")

    def progress(table: str, rows: int) -> None:
        bar.set_postfix_str(table)
        bar.update(rows)

    async with open_operations(settings) as operations:
        report = await export_parquet(
            operations.maintenance.exports,
            directory,
            settle_seconds=settings.changes.changes_settle_seconds,
            progress=progress,
        )
    bar.close()
    counts = ", ".join(f"{rows:,} {table}" for table, rows in report.rows.items())
    say(f"exported {counts} to {directory} in {report.seconds:.1f}s ({format.value})")
