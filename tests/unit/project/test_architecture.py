"""The package's shape is enforced, not hoped for: the import-linter contracts of
pyproject.toml (layers, forbidden imports, no circles), no import circle between any two
modules, and no function over 60 lines or class over 200 lines in ``graphsvc/``.

A long definition is usually two things that want their own names, so the limit is a smell
detector, not a target: one that reads better whole is listed in CONTRIBUTING.md's "Size
exceptions" with why, and a listed one that no longer needs it fails too, so the list stays
true."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx

from tests.support.paths import ROOT

PACKAGE = ROOT / "graphsvc"
CONTRIBUTING = PACKAGE.parent / "CONTRIBUTING.md"
MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 200


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


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definitions() -> dict[str, tuple[Definition, int]]:
    """Every function and class of the package by ``path:Qualified.name``, with its length
    in lines (decorators included)."""
    found: dict[str, tuple[Definition, int]] = {}

    def visit(node: ast.AST, path: str, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, Definition):
                name = f"{outer}.{child.name}" if outer else child.name
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found[f"{path}:{name}"] = (child, child.end_lineno - first + 1)
                visit(child, path, name)
            else:
                visit(child, path, outer)

    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE.parent))
        visit(ast.parse(path.read_text(encoding="utf-8")), relative, "")
    return found


def _oversized() -> dict[str, str]:
    """The definitions over their limit: ``path:Name`` -> how long, against what."""
    over = {}
    for where, (node, lines) in _definitions().items():
        limit = MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else MAX_FUNCTION_LINES
        if lines > limit:
            over[where] = f"{lines} lines, over {limit}"
    return over


def _size_exceptions() -> dict[str, str]:
    """``path:Name`` -> why, from the bullets of CONTRIBUTING.md's "## Size exceptions"."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    assert "\n## Size exceptions\n" in text, "CONTRIBUTING.md has no section Size exceptions"
    section = text.split("\n## Size exceptions\n", 1)[1].split("\n## ", 1)[0]
    bullets = re.findall(r"^- .*(?:\n  .*)*", section, re.MULTILINE)
    listed = {}
    for bullet in bullets:
        match = re.fullmatch(r"- `([^`:]+\.py:[\w.]+)`: (\S.*)", " ".join(bullet.split()))
        assert match, f"not a bullet `path:Name`: why: {bullet!r}"
        listed[match[1]] = match[2]
    return listed


def test_the_walk_finds_the_package_s_definitions() -> None:
    found = _definitions()
    assert len(found) > 200, "the walk found too few definitions to mean anything"
    assert "graphsvc/builders/bundles.py:build" in found
    assert "graphsvc/adapters/redis/mirror.py:Mirror.apply_many" in found


def test_no_definition_is_too_long() -> None:
    listed = _size_exceptions()
    too_long = [f"{where}: {how}" for where, how in _oversized().items() if where not in listed]
    assert not too_long, (
        "too long (split it along a seam, or list it in CONTRIBUTING.md's Size exceptions "
        "with why):\n" + "\n".join(too_long)
    )


def test_every_size_exception_is_still_needed() -> None:
    oversized = _oversized()
    needless = [where for where in _size_exceptions() if where not in oversized]
    assert not needless, (
        "listed in CONTRIBUTING.md's Size exceptions, but within the limits or gone:\n"
        + "\n".join(needless)
    )
