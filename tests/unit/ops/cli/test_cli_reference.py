"""The CLI reference of the docs: every command of the tree, with its usage, help and
options, as ``--help`` gives them."""

from __future__ import annotations

import re

import typer
from typer.core import TyperGroup

from graphsvc.ops.cli import app
from graphsvc.ops.cli.reference import markdown
from tests.support.helpers import CLI_PATHS

COMMANDS = set(CLI_PATHS)


def tree() -> dict[str, object]:
    """Every command of the app by its path after ``graphsvc``."""
    root = typer.main.get_command(app)
    found: dict[str, object] = {}

    def walk(group: TyperGroup, path: str) -> None:
        for name, command in group.commands.items():
            found[f"{path}{name}"] = command
            if isinstance(command, TyperGroup):
                walk(command, f"{path}{name} ")

    assert isinstance(root, TyperGroup)
    walk(root, "")
    return found


def test_the_tree_holds_every_command() -> None:
    assert set(tree()) == COMMANDS


def test_every_command_has_a_section_with_its_usage_and_help() -> None:
    text = markdown()
    headings = re.findall(r"^#{2,3} `graphsvc ([a-z -]+)`$", text, flags=re.MULTILINE)
    assert sorted(headings) == sorted(COMMANDS)  # each once
    for path, command in tree().items():
        section = text.split(f"`graphsvc {path}`\n", 1)[1].split("\n#", 1)[0]
        assert f"graphsvc {path} [OPTIONS]" in section
        first_line = command.help.strip().splitlines()[0]  # type: ignore[attr-defined]
        assert first_line in section


def test_options_are_listed_with_their_help_and_defaults() -> None:
    text = markdown()
    assert "| `--undirected / --directed` | whether each line follows both ways" in text
    assert "| `--grace SECONDS` | only events older than this" in text
    assert "\\[default: 0.1\\]" in text  # ranker train --share, brackets kept out of links
    assert "| `--scopes TEXT` | comma-separated: read,write,admin,internal \\[required\\] |" in text
    assert "--help" not in text.replace("answers `--help`", "")  # every command has it
