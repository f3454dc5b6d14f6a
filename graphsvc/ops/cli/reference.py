"""The CLI reference of the docs, rendered from the commands themselves (their usage, help and
options, as ``--help`` gives them), so the page cannot drift from the code."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import typer
from typer.core import TyperCommand, TyperGroup

from graphsvc.ops.cli.root import app

Command = TyperCommand | TyperGroup


def markdown() -> str:
    """Every command of ``graphsvc``, in the order ``graphsvc --help`` lists them: a heading,
    its usage, its help and a table of its arguments and options."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    context = typer.Context(root, info_name="graphsvc")
    lines = ["Every command answers `--help` with the same text.", ""]
    for command, ctx, depth in _walk(root, context, 2):
        lines += _section(command, ctx, depth)
    return "\n".join(lines)


def _walk(
    group: Command, parent: typer.Context, depth: int
) -> Iterator[tuple[Command, typer.Context, int]]:
    if not isinstance(group, TyperGroup):
        return
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        ctx = typer.Context(command, info_name=name, parent=parent)
        yield command, ctx, depth
        yield from _walk(command, ctx, depth + 1)


def _cell(text: str) -> str:
    """One table cell: on one line, and no bracket read as a link."""
    text = " ".join(text.split())
    for special in ("|", "[", "]"):
        text = text.replace(special, "\\" + special)
    return text


def _section(command: Command, ctx: typer.Context, depth: int) -> list[str]:
    usage = command.get_usage(ctx).removeprefix("Usage: ")
    lines = [f"{'#' * depth} `{ctx.command_path}`", "", "```text", usage, "```", ""]
    if command.help:
        lines += [inspect.cleandoc(command.help), ""]
    rows = [
        record
        for param in command.get_params(ctx)
        if param.name != "help" and (record := param.get_help_record(ctx)) is not None
    ]
    if rows:
        lines += ["| argument or option | meaning |", "|---|---|"]
        lines += [f"| `{' '.join(names.split())}` | {_cell(meaning)} |" for names, meaning in rows]
        lines.append("")
    if isinstance(command, TyperGroup):
        names = command.list_commands(ctx)
        lines += ["Commands: " + ", ".join(f"`{name}`" for name in names) + ".", ""]
    return lines
