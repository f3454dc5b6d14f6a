"""Docstrings and comments say why the code is as it is; measured figures live in
docs/performance.md, with the command that measured them, where a later run can replace them.

A figure quoted in code goes stale without anyone noticing: the code moves, the machine
changes, and the number stays. So no docstring or comment of ``graphsvc/`` or ``bench/`` (nor
a comment of the Cypher queries in ``cypher/`` and the Redis scripts the package ships) quotes
one. What counts as a measured figure:

- a number (or a range) followed by a time unit below the second: ``2.4 ms``, ``50-150 us``,
  ``8 µs``, ``300 ns`` (milliseconds and microseconds spelled out too);
- seconds with a fraction or as a range: ``0.8 s``, ``0.2-4 s``;
- a rate: ``3,000 reads/s``, ``100k edges/s``, ``500/s``;
- a percentile with its value: ``p99 80 ms``, ``p50 <= 2``;
- db hits: ``7,050 db hits``.

Whole seconds (``every 15 s``, ``the driver's default 30 s``) are left alone: they are how
settings, defaults and protocol waits are written, not measurements. A design constant below a
second is named instead (``DEADLOCK_FIRST_WAIT_SECONDS``), so the text stays true when the
value changes. Percentages and ratios are not checked: a share of users or a target is as
often a design choice as a measurement, which a reviewer tells apart.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

PYTHON = [ROOT / "graphsvc", ROOT / "bench"]
QUERIES_AND_SCRIPTS = [
    *sorted((ROOT / "cypher").glob("*.cypher")),
    *sorted((ROOT / "graphsvc" / "adapters" / "redis" / "lua").glob("*.lua")),
]

NUMBER = r"\d[\d,]*(?:\.\d+)?"
RANGE = rf"{NUMBER}(?:\s*(?:-|\u2013|to)\s*{NUMBER})?"
MEASURED = re.compile(
    rf"""
      ~?{RANGE}\s*(?:ms|us|µs|ns|milliseconds?|microseconds?)\b
    | (?:\d+\.\d+|{NUMBER}\s*(?:-|\u2013)\s*{NUMBER})\s*(?:s|secs?|seconds?)\b
    | {NUMBER}\s*[kM]?\s*(?:[A-Za-z]+\s+)?[A-Za-z]*/s\b
    | \bp(?:50|9\d|999)\b\W{{0,4}}\d
    | {NUMBER}\s+db\s+hits
    """,
    re.VERBOSE,
)
# A comment of a .cypher (//) or .lua (--) file, to the end of its line.
FILE_COMMENT = re.compile(r"(?:^|\s)(?://|--)(.*)$")


def python_files() -> list[Path]:
    return sorted(path for folder in PYTHON for path in folder.rglob("*.py"))


def docstrings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every string standing alone as a statement (the docstrings of modules, classes and
    functions, and those documenting an attribute), with the line it starts on."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def comments(source: str) -> Iterator[tuple[int, str]]:
    """Every comment, those on consecutive lines joined, so a figure broken over two lines
    is still seen whole."""
    block: list[str] = []
    first = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if block and line != last + 1:
            yield first, "\n".join(block)
            block = []
        if not block:
            first = line
        block.append(token.string.lstrip("#"))
        last = line
    if block:
        yield first, "\n".join(block)


def file_comments(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        found = FILE_COMMENT.search(line)
        if found:
            yield number, found.group(1)


def figures(path: Path) -> Iterator[str]:
    """``path:line: figure`` for each measured figure of the file's docstrings and comments."""
    source = path.read_text()
    if path.suffix == ".py":
        texts = [*docstrings(ast.parse(source, filename=str(path))), *comments(source)]
    else:
        texts = list(file_comments(source))
    for start, text in texts:
        for match in MEASURED.finditer(text):
            line = start + text.count("\n", 0, match.start())
            yield f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}"


def test_the_pattern_finds_measured_figures_and_leaves_settings_alone() -> None:
    measured = [
        "held the event loop for 110-140 ms",
        "dependency injection measured 50-150 us of CPU",
        "8.5 µs against 1.1 µs",
        "a fresh Neo4j plans each in 0.2-4 s",
        "between 2\u20133 ms",
        "Under wrk at 3,000 reads/s",
        "Transactions cannot reach 100k edges/s",
        "the followers page's p99 80-90 ms",
        "7,050 db hits against 1,742",
        "the driver builds 300 records ~20 ms slower",
    ]
    kept = [
        "a keep-alive comment every 15 s of silence",
        "not after the driver's default 30 s of retries",
        "again after 2, 4, 8, 16, 32 s",
        "at most 40 ids",
        "5,000 users per batch",
        "the worst turn's p99",
        "a probe's timeout (1 s by default)",
        "ARGV[2] ms",
    ]
    assert [text for text in measured if not MEASURED.search(text)] == []
    assert [text for text in kept if MEASURED.search(text)] == []


def test_no_docstring_or_comment_quotes_a_measured_figure() -> None:
    found = [figure for path in [*python_files(), *QUERIES_AND_SCRIPTS] for figure in figures(path)]
    assert not found, (
        "a docstring or comment quotes a measured figure; say why the code is as it is, and "
        "keep the figure, with how it was measured, in docs/performance.md:\n" + "\n".join(found)
    )
