"""Cypher queries live in ``cypher/<family>/<name>.cypher`` and are loaded as ``family/name``.

Keeping queries in files (the way aiosql keeps SQL, grouped in folders by family) lets them be
read, reviewed and profiled in Neo4j Browser as they are, and makes it impossible to format a
value into query text: every value is a ``$parameter``. Each file starts with a header saying
what it locks, the rules it checks, its parameters and what it returns.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

QUERY_DIR = Path(__file__).resolve().parent / "cypher"


def query_dir() -> Path:
    return QUERY_DIR


@cache
def query(name: str) -> str:
    """The text of ``cypher/<family>/<name>.cypher`` for ``family/name``; raises
    FileNotFoundError for unknown names."""
    family, slash, rest = name.partition("/")
    if not slash or not family or not rest or "/" in rest or ".." in name:
        raise FileNotFoundError(f"query names are 'family/name', got {name!r}")
    return (QUERY_DIR / family / f"{rest}.cypher").read_text(encoding="utf-8")


@cache
def with_prelude(prelude: str, name: str) -> str:
    """``name`` with ``prelude`` run first in the same statement, as a CALL subquery (its
    result rows, one, are not used): one round trip where two statements would take two.
    ``prelude`` must be valid as a subquery (no leading importing WITH) and return one row."""
    return f"CALL () {{\n{query(prelude)}\n}}\n{query(name)}"


def statements(name: str) -> list[str]:
    """A multi-statement file (such as the schema) split on ``;`` at line ends."""
    body = "\n".join(
        line for line in query(name).splitlines() if not line.lstrip().startswith("//")
    )
    parts = (part.strip().rstrip(";").strip() for part in body.split(";\n"))
    return [part for part in parts if part]
