"""Edge files read line by line: the reference parser, and the fallback of the column reader
(which hands a file here to find the line of an error, or for the rare layouts it does not
read itself). The accepted files and the rules (self-loops, duplicates, untimed lines) are
those of ``edge_files``.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from graphsvc.domain.ids import ID_RULE, is_user_id
from graphsvc.domain.model import micros_from_datetime
from graphsvc.ops.edge_columns import EdgeColumns, columns_of_pairs

HEADER_NAMES = {"src", "source", "from", "follower", "u"}
FUTURE_SLACK_US = 24 * 3600 * 1_000_000


class LoadError(ValueError):
    """A file that cannot be loaded; the message names the file and line."""


@dataclass(slots=True)
class EdgeSet:
    """Distinct follow edges ready to load, with what was skipped on the way."""

    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    lines: int = 0
    self_loops: int = 0
    duplicates: int = 0

    def add(self, src: str, dst: str, since: int) -> None:
        if src == dst:
            self.self_loops += 1
            return
        key = (src, dst)
        known = self.edges.get(key)
        if known is None:
            self.edges[key] = since
        else:
            self.duplicates += 1
            if since < known:
                self.edges[key] = since

    @property
    def users(self) -> list[str]:
        return sorted({uid for pair in self.edges for uid in pair})

    @property
    def count(self) -> int:
        return len(self.edges)

    def columns(self) -> EdgeColumns:
        return columns_of_pairs(
            self.edges, lines=self.lines, self_loops=self.self_loops, duplicates=self.duplicates
        )

    def summary(self) -> str:
        return (
            f"{self.lines:,} lines: {len(self.edges):,} distinct edges, "
            f"{self.self_loops:,} self-loops skipped, {self.duplicates:,} duplicates merged"
        )


class _Where:
    """``file:line`` for error messages, formatted only when an error needs it."""

    __slots__ = ("line", "path")

    def __init__(self, path: Path, line: int) -> None:
        self.path, self.line = path, line

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def parse_time(text: str, where: object) -> int:
    if text.isdigit():  # the common case: whole unix seconds
        micros = int(text) * 1_000_000
        if micros > time.time() * 1_000_000 + FUTURE_SLACK_US:
            raise LoadError(f"{where}: time {text!r} is in the future (milliseconds? use seconds)")
        return micros
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise LoadError(
                f"{where}: time {text!r} is neither unix seconds nor ISO-8601"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        micros = micros_from_datetime(moment)
    else:
        micros = round(seconds * 1_000_000)
    if micros < 0:
        raise LoadError(f"{where}: time {text!r} is before 1970")
    if micros > time.time() * 1_000_000 + FUTURE_SLACK_US:
        raise LoadError(f"{where}: time {text!r} is in the future (milliseconds? use seconds)")
    return micros


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        first = handle.readline()
        handle.seek(0)
        if path.suffix.lower() == ".csv" or ("," in first and not first.startswith("#")):
            for number, row in enumerate(csv.reader(handle), start=1):
                yield number, [cell.strip() for cell in row]
        else:
            for number, line in enumerate(handle, start=1):
                yield number, line.split()


def read_edge_lines(
    path: Path, *, undirected: bool = False, prefix: str = "", now: int | None = None
) -> EdgeSet:
    """Parse and validate the whole file, line by line.

    ``prefix`` is put before every id, so several data sets can live side by side; ``now``
    (microseconds) is when untimed lines end (default: the current time).
    """
    found = EdgeSet()
    pending: list[tuple[str, str, int | None]] = []
    valid: set[str] = set()
    for number, cells in _rows(path):
        if not cells or cells[0].startswith("#"):
            continue
        if not pending and cells[0].lower() in HEADER_NAMES:
            continue
        where = _Where(path, number)
        if len(cells) not in (2, 3):
            raise LoadError(f"{where}: expected 'src dst [time]', got {len(cells)} fields")
        src, dst = prefix + cells[0], prefix + cells[1]
        for uid in (src, dst):
            if uid in valid:
                continue
            valid.add(uid)
            if not is_user_id(uid):
                raise LoadError(f"{where}: {uid!r} is not a valid user id ({ID_RULE})")
        pending.append((src, dst, parse_time(cells[2], where) if len(cells) == 3 else None))
    found.lines = len(pending)
    # Untimed lines: distinct, increasing times that end now, in file order.
    start = (int(time.time() * 1_000_000) if now is None else now) - len(pending)
    for offset, (src, dst, since) in enumerate(pending):
        moment = since if since is not None else start + offset
        found.add(src, dst, moment)
        if undirected:
            found.add(dst, src, moment)
    return found
