"""The ``graphsvc`` command: every group's commands under one root, and ``main``, the
console script."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from graphsvc.ops.cli import data, keys, ranker, repair, services, serving
from graphsvc.ops.cli.failures import Commands

app = typer.Typer(
    name="graphsvc",
    help="Serve the API, run the local servers, load and check graphs.",
    cls=Commands,
    add_completion=True,  # --install-completion and --show-completion for bash, zsh, fish
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain Click help and errors: a usage error stays two lines
)


def _version(asked: bool) -> None:
    if asked:
        from graphsvc.version import __version__

        typer.echo(f"graphsvc {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Serve the API, run the local servers, load and check graphs."""


app.add_typer(serving.app)
app.add_typer(services.app, name="services")
app.add_typer(data.app)
app.add_typer(repair.app)
app.add_typer(keys.app, name="keys")
app.add_typer(ranker.app, name="ranker")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (``argv``: the arguments after the program's
    name, ``sys.argv``'s by default)."""
    command = typer.main.get_command(app)
    try:
        command.main(args=None if argv is None else list(argv), prog_name="graphsvc")
    except SystemExit as exit:  # Click ends every run, success included, with one
        return exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    return 0
