"""Edge files: parsing and validating a follow graph before anything is written, and what a
load of one reports.

Accepted files:
- edge lists, ``src dst [unix_ts]`` per line (whitespace separated, ``#`` comments), as SNAP
  publishes them;
- CSV, ``src,dst[,since]``, with an optional header row; ``since`` is unix seconds or ISO-8601.

Self-loops are skipped and duplicates merged (the earliest time wins); both are counted. Lines
without a time get distinct, increasing times ending now, so file order is follow order.

Files are read column-wise (``edge_arrow``) into ``EdgeColumns``; the line parser
(``edge_lines``) reads what that reader hands back, and names the line of an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from graphsvc.ops.edge_arrow import Unread, read_columns
from graphsvc.ops.edge_columns import EdgeColumns
from graphsvc.ops.edge_lines import EdgeSet, LoadError, read_edge_lines

__all__ = ["EdgeColumns", "EdgeSet", "Edges", "LoadError", "LoadReport", "batches",
           "read_edge_file", "read_edge_lines"]  # fmt: skip

# Either shape loads: columns from files, a dict of pairs from graphs built in Python.
Edges = EdgeColumns | EdgeSet


def read_edge_file(
    path: Path, *, undirected: bool = False, prefix: str = "", now: int | None = None
) -> Edges:
    """Parse and validate the whole file before anything is written.

    ``prefix`` is put before every id, so several data sets can live side by side; ``now``
    (microseconds) is when untimed lines end (default: the current time).
    """
    try:
        return read_columns(path, undirected=undirected, prefix=prefix, now=now)
    except (Unread, pa.ArrowException):
        return read_edge_lines(path, undirected=undirected, prefix=prefix, now=now)


@dataclass(frozen=True, slots=True)
class LoadReport:
    users: int
    edges: int
    created: int
    seconds: float

    @property
    def edges_per_second(self) -> float:
        return self.edges / self.seconds if self.seconds else 0.0


def batches(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
