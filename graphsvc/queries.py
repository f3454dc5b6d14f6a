"""Cypher queries live in ``cypher/<name>.cypher`` and are loaded by name.

Keeping queries in files (the way aiosql keeps SQL) lets them be read, reviewed and profiled
in Neo4j Browser as they are, and makes it impossible to format a value into query text:
every value is a ``$parameter``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "cypher"
_SOURCE_TREE = Path(__file__).resolve().parent.parent / "cypher"


def query_dir() -> Path:
    return _PACKAGED if _PACKAGED.is_dir() else _SOURCE_TREE


@cache
def query(name: str) -> str:
    """The text of ``cypher/<name>.cypher``; raises FileNotFoundError for unknown names."""
    return (query_dir() / f"{name}.cypher").read_text(encoding="utf-8")


def statements(name: str) -> list[str]:
    """A multi-statement file (such as the schema) split on ``;`` at line ends."""
    body = "\n".join(
        line for line in query(name).splitlines() if not line.lstrip().startswith("//")
    )
    parts = (part.strip().rstrip(";").strip() for part in body.split(";\n"))
    return [part for part in parts if part]
