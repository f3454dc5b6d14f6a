"""The package's shape is enforced, not hoped for: the import-linter contracts of
pyproject.toml (layers, forbidden imports, no circles), no import circle between any two
modules, and no function over 80 lines or class over 250 lines in ``graphsvc/``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "graphsvc"
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 250


def test_the_import_linter_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=PACKAGE.parent, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-4_000:] + result.stderr[-2_000:]
    assert "0 broken" in result.stdout


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("graphsvc", cache_dir=None)
    imports = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            imports.add_edge(module, imported)
    # A package's __init__ is not a step of a circle through its own modules (Python runs it
    # first); every other edge counts, including imports inside functions.
    for package in [m for m in graph.modules if (PACKAGE.parent / m.replace(".", "/")).is_dir()]:
        for child in graph.find_children(package):
            if imports.has_edge(child, package):
                imports.remove_edge(child, package)
    circles = list(nx.simple_cycles(imports))
    assert not circles, f"import circles: {circles[:5]}"


def _definitions() -> list[tuple[str, ast.AST, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}"
                found.append((where, node, node.end_lineno - first + 1))
    return found


@pytest.mark.parametrize(
    ("kind", "limit"),
    [
        ((ast.FunctionDef, ast.AsyncFunctionDef), MAX_FUNCTION_LINES),
        ((ast.ClassDef,), MAX_CLASS_LINES),
    ],
    ids=["functions", "classes"],
)
def test_no_definition_is_too_long(kind: tuple[type, ...], limit: int) -> None:
    measured = [(where, lines) for where, node, lines in _definitions() if isinstance(node, kind)]
    assert len(measured) > 20, "the walk found too few definitions to mean anything"
    too_long = [f"{where}: {lines} lines" for where, lines in measured if lines > limit]
    assert not too_long, f"longer than {limit} lines:\n" + "\n".join(too_long)
