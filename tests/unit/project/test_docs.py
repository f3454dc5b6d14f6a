"""The documentation stays true as the code moves: the site builds strict, the README stays a
front page, and every test, module, function, query, error code and setting a page names
exists. When code moves, these tests name the page and line to update.

The settings tables and the import contracts are generated (``docs/hooks.py``), so they need
no check beyond the build; the settings reference they come from is checked here too."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from graphsvc.adapters.neo4j.queries import catalog
from graphsvc.domain.errors import GraphError
from graphsvc.settings import (
    SECRET_SETTINGS,
    SECTION_OF,
    SECTIONS,
    LocalServerSettings,
)
from graphsvc.settings.reference import settings_reference
from tests.support.paths import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 160
# Pages as the site shows them: every page, the README, and what a page includes (snippets).
INCLUDE = re.compile(r'^--8<-- "([^"]+)"', re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`([^`\n]+)`")
TEST_REF = re.compile(r"\b(tests/[\w/]+\.py)::([\w:]+)")
# graphsvc/path/module.py:Name.attr (or a folder, or a file of another kind)
PATH_REF = re.compile(r"^((?:graphsvc|tests|bench|notebooks|docs|cypher)/[\w./-]*?)(?::([\w.]+))?$")
MODULE_REF = re.compile(r"^(graphsvc(?:\.\w+)+):([\w.]+)$")
QUERY_REF = re.compile(r"^([a-z]+)/([a-z][a-z0-9_]*)$")
NARRATION = [
    (re.compile(r"(?<![\w&/])#\d+\b"), "an issue number"),
    (re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE), "an issue number"),
    (re.compile(r"\bsessions?\b", re.IGNORECASE), '"session"'),
    (re.compile(r"\bused to\b", re.IGNORECASE), '"used to"'),
]


def own_pages() -> list[Path]:
    """The pages of docs/ and the README."""
    return [*sorted(DOCS.glob("*.md")), README]


def pages() -> list[Path]:
    """The pages and the files they include (CONTRIBUTING.md, CHANGELOG.md)."""
    found = own_pages()
    for page in list(found):
        found += [ROOT / name for name in INCLUDE.findall(page.read_text())]
    return list(dict.fromkeys(found))


def lines_of(page: Path, *, code_blocks: bool = True) -> Iterator[tuple[int, str]]:
    """The page's lines, numbered from 1; without fenced code blocks unless asked."""
    text = page.read_text()
    if not code_blocks:  # blank them out, keeping the line numbers
        text = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), text)
    yield from enumerate(text.splitlines(), start=1)


def spans(page: Path) -> Iterator[tuple[int, str]]:
    """Every inline code span of the page's prose, with its line."""
    for number, line in lines_of(page, code_blocks=False):
        for span in CODE.findall(line):
            yield number, span.strip()


def where(page: Path, number: int) -> str:
    return f"{page.relative_to(ROOT)}:{number}"


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def defines(path: Path, dotted: str) -> bool:
    """Whether the module at ``path`` defines ``dotted`` (``name``, ``Class.method``...): a
    function, a class, or an assigned name, read from the source with ast."""
    scope: list[ast.stmt] = parsed(path).body
    for part in dotted.split("."):
        found = next((node for node in scope if part in _names(node)), None)
        if found is None:
            return False
        scope = getattr(found, "body", [])
    return True


def _names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def test_the_site_builds_strict(tmp_path: Path) -> None:
    """What `make docs` runs, into a directory of its own: a broken link or anchor, a missing
    include, a page left out of the nav or any warning fails it."""
    site = str(tmp_path / "site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", site],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").exists()


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines: it is the front page (at most {README_MAX_LINES}); "
        "the rest belongs in a page of docs/"
    )


def test_every_test_a_page_names_exists() -> None:
    missing = []
    for page in pages():
        for number, line in lines_of(page):
            for file, name in TEST_REF.findall(line):
                path = ROOT / file
                if not path.exists() or not defines(path, name.replace("::", ".")):
                    missing.append(f"{where(page, number)}: {file}::{name}")
    assert not missing, (
        "pages name tests that do not exist (renamed or moved? name the test that proves the "
        "claim now):\n" + "\n".join(missing)
    )


def test_every_module_and_function_a_page_names_exists() -> None:
    """Paths (`graphsvc/services/writes.py`, `tests/unit`) and definitions in them
    (`graphsvc/services/writes.py:Writes.hold`, `graphsvc.services.writes:Writes`): a page that
    traces the code through a module that moved says so here. (Included files are left out:
    CHANGELOG.md names paths as they were.)"""
    missing = []
    for page in own_pages():
        for number, span in spans(page):
            if any(mark in span for mark in "<*{ ") or "..." in span:
                continue  # a pattern (cypher/<family>.cypher, tests/integration/*), not a path
            if found := MODULE_REF.match(span):
                module, name = found.groups()
                base = ROOT / module.replace(".", "/")
                path = base.with_suffix(".py") if base.with_suffix(".py").exists() else base
                path = path / "__init__.py" if path.is_dir() else path
            elif found := PATH_REF.match(span):
                path, name = ROOT / found.group(1), found.group(2)
            else:
                continue
            if not path.exists():
                missing.append(f"{where(page, number)}: {span} (no such file or folder)")
            elif name and (path.suffix != ".py" or not defines(path, name)):
                missing.append(f"{where(page, number)}: {span} (not defined there)")
    assert not missing, (
        "pages name code that is not where they say (moved or renamed? point the page at where "
        "the code is):\n" + "\n".join(missing)
    )


def test_every_query_a_page_names_exists() -> None:
    queries = catalog()
    families = {name.split("/")[0] for name in queries}
    missing = [
        f"{where(page, number)}: {span}"
        for page in pages()
        for number, span in spans(page)
        if (found := QUERY_REF.match(span)) and found.group(1) in families and span not in queries
    ]
    assert not missing, "pages name queries that cypher/ does not define:\n" + "\n".join(missing)


def _raised_codes() -> set[str]:
    """The code of every error the service can answer with (the GraphError family)."""
    for module in ("graphsvc.api.app", "graphsvc.workers.worker"):  # every subclass defined
        importlib.import_module(module)

    codes, todo = set(), list(GraphError.__subclasses__())
    while todo:
        error = todo.pop()
        codes.add(error.code)
        todo += error.__subclasses__()
    return codes


def test_every_error_code_is_on_the_api_page() -> None:
    documented = {span for _, span in spans(DOCS / "api.md")}
    missing = sorted(_raised_codes() - documented)
    assert not missing, f"error codes missing from the Errors table of docs/api.md: {missing}"


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_no_page_narrates_history(page: Path) -> None:
    """Pages describe the software as it is: what changed belongs in CHANGELOG.md."""
    found = [
        f"{where(page, number)}: {what}: {line.strip()}"
        for number, line in lines_of(page)
        for pattern, what in NARRATION
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def test_every_setting_has_a_row_with_a_description() -> None:
    rows = settings_reference()
    names = {row.env for row in rows}
    fields = {name.upper() for name in SECTION_OF | LocalServerSettings.model_fields}
    assert names == fields
    bare = [row.env for row in rows if not row.description.strip()]
    assert not bare, f"settings without a description (Field(description=...)): {bare}"


def test_a_row_names_the_class_that_declares_the_setting() -> None:
    sections = {row.env: row.section for row in settings_reference()}
    assert sections["NEO4J_URI"] == "Neo4jSettings"
    assert sections["TIMELINE_READER_CAP"] == "TimelineSettings"
    assert sections["STATE_DIR"] == "LocalServerSettings"


def test_secrets_show_no_default_value() -> None:
    rows = {row.env: row for row in settings_reference()}
    for name in SECRET_SETTINGS:
        assert rows[name.upper()].default == "(development value)"
    shown = " ".join(row.default for row in rows.values())
    for name in SECRET_SETTINGS:
        assert str(SECTIONS[SECTION_OF[name]].model_fields[name].default) not in shown


def test_defaults_are_written_as_the_environment_takes_them() -> None:
    rows = {row.env: row.default for row in settings_reference()}
    assert rows["REDIS_CLUSTER"] == "false"
    assert rows["WORKER_RECONCILE_SECONDS"] == "unset"
    assert rows["NEO4J_TX_TIMEOUT_SECONDS"] == "5"
    assert rows["STATE_DIR"] == "./.local"  # never a path of the machine that built the docs
    assert rows["INTERACTION_WEIGHTS"].startswith('{"message": 5')
