"""Edge files: one reader, from a file to the distinct follow edges as columns, and what a load
of them reports.

Accepted files (SNAP's formats, plain or compressed: ``.gz``, ``.bz2``, ``.zst``, ``.lz4``):
- edge lists, ``src dst [unix_ts]`` per line, tab or space separated (whichever the first data
  line uses), ``#`` comments;
- CSV, ``src,dst[,since]``, with an optional header row; ``since`` is unix seconds or ISO-8601,
  and an empty one is no time.
Every data row has as many fields as the first one: the time column is the file's, not the
row's. Self-loops are skipped and duplicates merged (the earliest time wins); both are counted.
Rows without a time get distinct, increasing times ending now, so file order is follow order.

pyarrow's CSV parser splits the file on every core and never names a line: its invalid-row
handler sees a row's text and width but, parsing blocks in parallel, not its number. So a row
of the wrong width stops the parse, an invalid id or time is found in the columns by its row,
and only then is the file read again, line by line as the parser split it, to name the line.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from graphsvc.domain.model import micros_from_datetime
from graphsvc.wire.ids import ID_MAX, ID_RULE, USER_ID_PATTERN

HEADER_NAMES = frozenset({"src", "source", "from", "follower", "u"})
FUTURE_SLACK_US = 24 * 3600 * 1_000_000
_FIELDS = ("src", "dst", "since")
_SHAPE = "'src dst [time]'"
_UNIT = "(milliseconds? use seconds)"
_BLOCK = 16 << 20
_WHOLE_SECONDS = pa.int64()
_COMPRESSED = {".gz", ".bz2", ".zst", ".lz4"}
_SECONDS_DIGITS = 12  # more digits of unix seconds are past the year 33,000: in the future

# A data row that is wrong: its index among the data rows, and what is wrong with it.
BadRow = tuple[int, str]


class LoadError(ValueError):
    """A file that cannot be loaded; the message names the file, the line when a row is at
    fault, and the cause: the CLI shows it as one line."""


@dataclass(slots=True, eq=False)
class Edges:
    """Distinct edges sorted by (follower, followed), with what was skipped on the way.

    Millions of edges stay a few arrays from the file to Neo4j's importer and the mirror:
    ``ids`` holds every user of an edge once, in byte order, and ``src`` and ``dst`` index
    it. A dict of pairs is built only when asked for (``edges``), for small graphs and tests.
    """

    ids: pa.Array
    src: np.ndarray
    dst: np.ndarray
    since: np.ndarray
    lines: int = 0
    self_loops: int = 0
    duplicates: int = 0
    _pairs: dict[tuple[str, str], int] | None = field(default=None, repr=False)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, int]], *, undirected: bool = False) -> Edges:
        """Edges of (follower, followed, since in microseconds) rows built in Python, merged
        as a file's rows are; an invalid id raises LoadError naming its row."""
        listed = list(rows)
        ends = [
            pa.chunked_array([pa.array([row[k] for row in listed], pa.string())]) for k in (0, 1)
        ]
        names, src, dst = _encode(ends)
        bad = _invalid_id(names, src, dst)
        if bad:
            raise LoadError(f"row {bad[0] + 1}: {bad[1]}")
        since = np.fromiter((row[2] for row in listed), dtype=np.int64, count=len(listed))
        return merge_edges(names, src, dst, since, undirected=undirected)

    @property
    def count(self) -> int:
        return len(self.src)

    @property
    def users(self) -> list[str]:
        return self.ids.to_pylist()

    @property
    def edges(self) -> dict[tuple[str, str], int]:
        """(src, dst) -> since, built on first use (costly for millions of edges)."""
        if self._pairs is None:
            names = self.ids.to_numpy(zero_copy_only=False)
            pairs = zip(names[self.src].tolist(), names[self.dst].tolist(), strict=True)
            self._pairs = dict(zip(pairs, self.since.tolist(), strict=True))
        return self._pairs

    def summary(self) -> str:
        return (
            f"{self.lines:,} lines: {self.count:,} distinct edges, "
            f"{self.self_loops:,} self-loops skipped, {self.duplicates:,} duplicates merged"
        )


def read_edge_file(
    path: Path, *, undirected: bool = False, prefix: str = "", now: int | None = None
) -> Edges:
    """Parse and validate the whole file before anything is written.

    ``prefix`` is put before every id, so several data sets can live side by side; ``now``
    (microseconds) is when untimed rows end (default: the current time).
    """
    rows = read_edge_rows(path, prefix=prefix, now=now)
    return merge_edges(rows.names, rows.src, rows.dst, rows.since, undirected=undirected)


@dataclass(frozen=True, slots=True)
class EdgeRows:
    """A file's data rows in file order, validated and not merged: for readers that count
    rows rather than edges (an evaluation holds out pairs, and replays interactions)."""

    names: pa.Array  # every id once, in no order
    src: np.ndarray  # each row's ends, as indexes into names
    dst: np.ndarray
    since: np.ndarray  # microseconds
    timed: np.ndarray  # which rows have a time of their own


def read_edge_rows(path: Path, *, prefix: str = "", now: int | None = None) -> EdgeRows:
    """The data rows of ``read_edge_file``, before self-loops and duplicates are merged."""
    layout = _layout(path)
    if layout is None:  # empty, or comments only
        nothing = np.zeros(0, np.int64)
        return EdgeRows(pa.array([], pa.string()), nothing, nothing, nothing, nothing > 0)
    rows = _read_rows(path, layout, prefix)
    since, timed, bad_time = _since(rows.times, len(rows.src), now)
    bad = [found for found in (_invalid_id(rows.names, rows.src, rows.dst), bad_time) if found]
    if bad:
        row, message = min(bad)
        found = _find(path, layout, rows.table_row(row))
        raise LoadError(f"{path}:{found[0]}: {message}" if found else f"{path}: {message}")
    return EdgeRows(rows.names, rows.src, rows.dst, since, timed)


def merge_edges(
    names: pa.Array, src: np.ndarray, dst: np.ndarray, since: np.ndarray, *, undirected: bool
) -> Edges:
    """Rows (indexes into ``names``, each id once) to distinct edges: ids sorted by bytes, as
    the stores order them; self-loops dropped and counted; duplicates merged (the earliest
    time wins) and counted; each undirected row followed both ways; ids that only took part
    in self-loops, comments or a header dropped."""
    lines = len(src)
    order = pc.sort_indices(names).to_numpy().astype(np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ids, src, dst = names.take(pa.array(order)), rank[src], rank[dst]
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        since = np.concatenate([since, since])
    loops = src == dst
    self_loops = int(loops.sum())
    if self_loops:
        src, dst, since = src[~loops], dst[~loops], since[~loops]
    n = max(len(ids), 1)
    key = src * n + dst
    by_key = np.argsort(key, kind="stable")
    key = key[by_key]
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if len(key) else key
    merged = np.minimum.reduceat(since[by_key], first) if len(key) else since.astype(np.int64)
    key = key[first]
    src, dst = key // n, key % n
    present = np.zeros(len(ids), dtype=bool)
    present[src] = True
    present[dst] = True
    if not present.all():
        ids = ids.filter(pa.array(present))
        renumber = np.cumsum(present) - 1
        src, dst = renumber[src], renumber[dst]
    code = np.int32 if len(ids) < 2**31 else np.int64
    return Edges(
        ids,
        src.astype(code),
        dst.astype(code),
        merged.astype(np.int64),
        lines,
        self_loops,
        len(by_key) - len(first),
    )


# -- the file's layout, and the line of a row -----------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layout:
    """How the parser splits this file's lines: from its first data line."""

    delimiter: str
    csv: bool  # quoted cells, trimmed
    width: int
    first: int  # the first data line's number

    def cells(self, text: str) -> list[str]:
        if self.csv:
            return next(csv.reader([text], delimiter=self.delimiter))
        return text.split(self.delimiter)


def _ignored(text: str) -> bool:
    """A line that holds no row: blank, or a comment."""
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines, decompressed as the parser decompresses them (by the name's suffix)."""
    try:
        with io.TextIOWrapper(
            pa.input_stream(str(path), compression="detect"), encoding="utf-8", newline=None
        ) as text:
            for number, line in enumerate(text, start=1):
                yield number, line.rstrip("\n")
    except UnicodeDecodeError:
        raise LoadError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None


def _layout(path: Path) -> _Layout | None:
    try:
        path.open("rb").close()  # the system's words for a missing or unreadable file
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None
    for number, text in _lines(path):
        if _ignored(text):
            continue
        suffixes = [s.lower() for s in path.suffixes if s.lower() not in _COMPRESSED]
        comma = "," in text or suffixes[-1:] == [".csv"]
        delimiter = "," if comma else "\t" if "\t" in text else " "
        width = len(_Layout(delimiter, comma, 0, number).cells(text))
        if width not in (2, 3):
            raise LoadError(f"{path}:{number}: expected {_SHAPE}, got {width} fields")
        return _Layout(delimiter, comma, width, number)
    return None


def _find(path: Path, layout: _Layout, row: int | None) -> tuple[int, str] | None:
    """The number and text of the line the parser made row ``row`` of (counting the rows it
    kept), or, for None, of the first row of a wrong width."""
    index = -1
    for number, text in _lines(path):
        if not text:  # the parser skips empty lines
            continue
        if len(layout.cells(text)) != layout.width:
            if row is None and not _ignored(text):
                return number, text
            continue
        index += 1
        if index == row:
            return number, text
    return None


def _wrong_width(path: Path, layout: _Layout, parse_error: str) -> LoadError:
    found = _find(path, layout, None)
    if found is None:  # the scan splits lines as the parser does: not expected
        return LoadError(f"{path}: {parse_error}")
    number, text = found
    width = len(layout.cells(text))
    if width not in (2, 3):
        return LoadError(f"{path}:{number}: expected {_SHAPE}, got {width} fields")
    return LoadError(
        f"{path}:{number}: expected {layout.width} fields as on line {layout.first}, got "
        f"{width} (a file's rows all have a time, or none does)"
    )


# -- the rows --------------------------------------------------------------------------------


def _table(path: Path, layout: _Layout, times: pa.DataType = _WHOLE_SECONDS) -> pa.Table:
    """The parser's table: ids as strings, times as whole seconds when they all are (else
    read again as strings); comment and blank rows of another width skipped."""
    names = list(_FIELDS[: layout.width])
    wrong: list[str] = []

    def invalid(row: pacsv.InvalidRow) -> str:
        if _ignored(row.text):
            return "skip"
        wrong.append(row.text)
        return "error"

    try:
        return pacsv.read_csv(
            str(path),
            read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK),
            parse_options=pacsv.ParseOptions(
                delimiter=layout.delimiter,
                quote_char='"' if layout.csv else False,
                invalid_row_handler=invalid,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={"src": pa.string(), "dst": pa.string(), "since": times},
                null_values=[""],
                strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        if wrong:
            raise _wrong_width(path, layout, str(exc)) from None
        if "conversion error to int64" in str(exc):
            return _table(path, layout, pa.string())
        if "invalid UTF8" in str(exc):
            raise LoadError(f"{path}: not UTF-8 text") from None
        raise LoadError(f"{path}: {exc}") from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class _Rows:
    """The data rows, and which rows of the parser's table they are."""

    names: pa.Array  # every id cell once, prefixed
    src: np.ndarray  # indexes into names
    dst: np.ndarray
    times: pa.Array | None  # int64 (null: none), or strings ("": none)
    kept: np.ndarray | None  # of the table's rows, those that are data (None: all)
    skipped: int  # a header row's

    def table_row(self, row: int) -> int:
        at = row + self.skipped
        return at if self.kept is None else int(np.flatnonzero(self.kept)[at])


def _encode(ends: list[pa.ChunkedArray]) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Every id once (in no order) and each row's ends as indexes into it: the rest of the
    work is on integers, and ids are checked once each, however many rows hold them."""
    rows = len(ends[0])
    encoded = pa.chunked_array(ends[0].chunks + ends[1].chunks, pa.string()).dictionary_encode()
    if not encoded.num_chunks:
        return pa.array([], pa.string()), np.zeros(0, np.int64), np.zeros(0, np.int64)
    indices = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks])
    return encoded.chunk(0).dictionary, indices[:rows], indices[rows:]


def _read_rows(path: Path, layout: _Layout, prefix: str) -> _Rows:
    """The data rows: comments (a first cell starting with #), blank rows and a header
    dropped; CSV cells trimmed."""
    table = _table(path, layout)
    ends = [table.column("src"), table.column("dst")]
    times = table.column("since").combine_chunks() if layout.width == 3 else None
    if layout.csv:
        ends = [pc.utf8_trim_whitespace(column) for column in ends]
        if times is not None and pa.types.is_string(times.type):
            times = pc.utf8_trim_whitespace(times)
    names, src, dst = _encode(ends)
    kept = None
    comment = pc.starts_with(names, "#").to_numpy(zero_copy_only=False)
    blank = pc.equal(pc.utf8_length(names), 0).to_numpy(zero_copy_only=False)
    if comment.any() or blank.any():  # checked on the distinct cells, then on rows if need be
        kept = ~(comment[src] | (blank[src] & blank[dst]))
        src, dst = src[kept], dst[kept]
        times = times.filter(pa.array(kept)) if times is not None else None
    skipped = int(len(src) > 0 and names[int(src[0])].as_py().lower() in HEADER_NAMES)
    if skipped:
        src, dst = src[1:], dst[1:]
        times = times.slice(1) if times is not None else None
    if prefix:
        names = pc.binary_join_element_wise(prefix, names, "")
    return _Rows(names, src, dst, times, kept, skipped)


# -- ids and times -----------------------------------------------------------------------------


def _invalid_id(names: pa.Array, src: np.ndarray, dst: np.ndarray) -> BadRow | None:
    """The first row with an invalid id (cells of comments and a header are in ``names``
    too, and checked only if a data row holds them)."""
    valid = pc.and_(
        pc.match_substring_regex(names, USER_ID_PATTERN),
        pc.less_equal(pc.utf8_length(names), ID_MAX),
    ).to_numpy(zero_copy_only=False)
    if valid.all():
        return None
    wrong = ~valid[src] | ~valid[dst]
    if not wrong.any():
        return None
    row = int(np.argmax(wrong))
    uid = names[int(src[row] if not valid[src[row]] else dst[row])].as_py()
    return row, f"{uid!r} is not a valid user id ({ID_RULE})"


def _since(
    times: pa.Array | None, rows: int, now: int | None
) -> tuple[np.ndarray, np.ndarray, BadRow | None]:
    """Each row's time in microseconds: its own, or for an untimed row one of distinct,
    increasing times in file order that end at ``now``; which rows are timed; and the first
    row whose time is wrong."""
    start = (int(time.time() * 1_000_000) if now is None else now) - rows
    since = start + np.arange(rows, dtype=np.int64)
    if times is None:
        return since, np.zeros(rows, dtype=bool), None
    if pa.types.is_integer(times.type):
        timed = times.is_valid().to_numpy(zero_copy_only=False)
    else:
        timed = pc.greater(pc.utf8_length(times), 0).to_numpy(zero_copy_only=False)
    if timed.all():
        micros, bad = _micros(times)
        return micros, timed, bad
    at = np.flatnonzero(timed)
    since[at], bad = _micros(times.filter(pa.array(timed)))
    return since, timed, (int(at[bad[0]]), bad[1]) if bad else None


def _micros(cells: pa.Array) -> tuple[np.ndarray, BadRow | None]:
    """Time cells to microseconds: whole unix seconds in bulk, anything else one by one; and
    the first cell that is no time, or is before 1970 or in the future."""
    latest = int(time.time() * 1_000_000) + FUTURE_SLACK_US
    if pa.types.is_integer(cells.type):
        return _from_seconds(cells.to_numpy(), latest, cells)
    out = np.empty(len(cells), dtype=np.int64)
    whole = pc.ascii_is_decimal(cells).to_numpy(zero_copy_only=False)
    bad: list[BadRow] = []
    if whole.any():
        digits = cells.filter(pa.array(whole))
        huge = pc.greater(pc.utf8_length(digits), _SECONDS_DIGITS)
        seconds = pc.cast(pc.if_else(huge, str(latest), digits), pa.int64()).to_numpy()
        out[whole], late = _from_seconds(seconds, latest, digits)
        bad += [(int(np.flatnonzero(whole)[late[0]]), late[1])] if late else []
    rest = np.flatnonzero(~whole).tolist()
    for at, text in zip(rest, cells.filter(pa.array(~whole)).to_pylist(), strict=True):
        try:
            out[at] = _parse_time(text, latest)
        except ValueError as exc:
            bad.append((at, str(exc)))
            break
    return out, min(bad) if bad else None


def _from_seconds(
    seconds: np.ndarray, latest: int, cells: pa.Array
) -> tuple[np.ndarray, BadRow | None]:
    wrong = np.flatnonzero((seconds < 0) | (seconds > latest // 1_000_000))
    if not len(wrong):
        return seconds * 1_000_000, None
    at = int(wrong[0])
    text = str(cells[at].as_py())
    if seconds[at] < 0:
        return seconds, (at, f"time {text!r} is before 1970")
    return seconds, (at, f"time {text!r} is in the future {_UNIT}")


def _parse_time(text: str, latest: int) -> int:
    """Unix seconds (fractions too) or ISO-8601 (UTC unless it says otherwise) to
    microseconds, from 1970 to ``latest``."""
    try:
        micros = round(float(text) * 1_000_000)
    except (ValueError, OverflowError):  # not a number, or NaN or infinite
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"time {text!r} is neither unix seconds nor ISO-8601") from None
        micros = micros_from_datetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    if micros < 0:
        raise ValueError(f"time {text!r} is before 1970")
    if micros > latest:
        raise ValueError(f"time {text!r} is in the future {_UNIT}")
    return micros


# -- what a load reports -----------------------------------------------------------------------


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
