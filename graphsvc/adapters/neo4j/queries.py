"""Named Cypher queries, one file per family (``cypher/<family>.cypher``), run as ``family/name``.

Keeping queries in files (the way aiosql keeps SQL: several named queries to a file) lets them
be read, reviewed and profiled in Neo4j Browser as they are, and makes it impossible to format
a value into query text: every value is a ``$parameter``. A query starts with its name line,
``// name: followers_page``, then its header (what it locks, the rules it checks, its
parameters and what it returns), then the statement; a file may open with a comment on the
family. What Neo4j receives is the name line and the statement: the name line makes Neo4j's
query log name the query it shows, and the header stays with the reader, since its bytes would
otherwise be packed, logged by the driver, sent and looked up in Neo4j's query cache with
every statement.

The files are the top-level ``cypher/`` folder of a checkout; a wheel carries them as
``graphsvc/cypher`` (``pyproject.toml``). They are parsed once, on the first query asked for,
and a file that breaks the format stops that first query with the file and line. This module
imports nothing outside the standard library, so tooling can read the queries without a driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

NAME_LINE = re.compile(r"//\s*name:(.*)")
NAME = re.compile(r"[a-z][a-z0-9_]*")
OPTIONS_LINE = re.compile(r"CYPHER\s")  # a statement's query options, on its first line
SUFFIX = ".cypher"


class QueryFileError(ValueError):
    """A family file that breaks the format, reported as ``file:line: what``."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")


class UnknownQuery(LookupError):
    """A name no family file defines: a typo at a call site fails loudly, never runs nothing."""


@dataclass(frozen=True)
class Query:
    """One named query: where it is written (for messages) and what it says."""

    name: str  # family/name
    source: str
    line: int  # of the name line, from 1
    header: str  # the header's comment lines, without the name line
    text: str  # the name line and the statement, as Neo4j receives them


def cypher_dir() -> Traversable:
    """The folder of family files: inside the package when installed from a wheel, else the
    checkout's top-level ``cypher/`` (an editable install imports the checkout's package)."""
    packaged = files("graphsvc") / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "cypher"


def parse_family(family: str, source: str, text: str) -> dict[str, Query]:
    """The queries of one family file, by ``family/name``. Refuses what would otherwise load a
    query other than the one named: text before the first name line, a name line with no name,
    a name twice, a query with no header or no statement."""
    found: dict[str, Query] = {}
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if NAME_LINE.fullmatch(line.strip())]
    for i in range(starts[0] if starts else len(lines)):
        if lines[i].strip() and not lines[i].lstrip().startswith("//"):
            raise QueryFileError(source, i + 1, "a statement before the first '// name:' line")
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        query = _parse_query(family, source, start, lines[start:end])
        if query.name in found:
            first, bare = found[query.name].line, query.name.partition("/")[2]
            raise QueryFileError(
                source, start + 1, f"{bare!r} is named twice (first at line {first})"
            )
        found[query.name] = query
    return found


def _parse_query(family: str, source: str, start: int, block: list[str]) -> Query:
    name = block[0].strip().partition(":")[2].strip()
    if not name:
        raise QueryFileError(source, start + 1, "a name line with no name after 'name:'")
    if not NAME.fullmatch(name):
        raise QueryFileError(source, start + 1, f"{name!r} is not a query name ([a-z0-9_])")
    while block and not block[-1].strip():
        block = block[:-1]
    header = []
    for line in block[1:]:
        if not line.lstrip().startswith("//"):
            break
        header.append(line)
    if not header:
        raise QueryFileError(source, start + 1, f"{name!r} has no header comment")
    if len(block) == 1 + len(header):
        raise QueryFileError(source, start + 1, f"{name!r} has no statement")
    return Query(
        name=f"{family}/{name}",
        source=source,
        line=start + 1,
        header="\n".join(header),
        text="\n".join([block[0], *block[1 + len(header) :]]) + "\n",
    )


def load(paths: Iterable[Traversable]) -> dict[str, Query]:
    """Every query of the given family files (each file's stem is its family)."""
    catalog: dict[str, Query] = {}
    for path in sorted(paths, key=lambda path: path.name):
        family = path.name.removesuffix(SUFFIX)
        catalog.update(parse_family(family, str(path), path.read_text(encoding="utf-8")))
    return catalog


@cache
def catalog() -> dict[str, Query]:
    """Every query of every family file, parsed once per process."""
    return load(path for path in cypher_dir().iterdir() if path.name.endswith(SUFFIX))


def query(name: str) -> str:
    """The text of the query ``family/name``; raises UnknownQuery for a name no file defines."""
    found = catalog().get(name)
    if found is None:
        family, slash, rest = name.partition("/")
        if not slash or not family or not rest:
            raise UnknownQuery(f"query names are 'family/name', got {name!r}")
        source = cypher_dir() / f"{family}{SUFFIX}"
        if not source.is_file():
            raise UnknownQuery(f"no query {name!r}: there is no family file {source}")
        raise UnknownQuery(f"no query {name!r}: {source} has no '// name: {rest}' line")
    return found.text


@cache
def with_prelude(prelude: str, name: str) -> str:
    """``name`` with ``prelude`` run first in the same statement, as a CALL subquery (its
    result rows, one, are not used): one round trip where two statements would take two.
    ``prelude`` must be valid as a subquery (no leading importing WITH) and return one row.
    Query options (``CYPHER ...`` lines) of either are the whole statement's, so they lead it."""
    inner_options, inner = _options_apart(query(prelude))
    outer_options, outer = _options_apart(query(name))
    options = "".join(f"{line}\n" for line in dict.fromkeys(outer_options + inner_options))
    return f"{options}CALL () {{\n{inner}\n}}\n{outer}"


def _options_apart(text: str) -> tuple[list[str], str]:
    """A query's ``CYPHER ...`` option lines, and its text without them."""
    lines = text.splitlines()
    options = [line for line in lines if OPTIONS_LINE.match(line)]
    return options, "\n".join(line for line in lines if not OPTIONS_LINE.match(line))


def statements(name: str) -> list[str]:
    """A multi-statement query (such as the schema) split on ``;`` at line ends."""
    body = "\n".join(
        line for line in query(name).splitlines() if not line.lstrip().startswith("//")
    )
    parts = (part.strip().rstrip(";").strip() for part in body.split(";\n"))
    return [part for part in parts if part]
