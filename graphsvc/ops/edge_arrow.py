"""Edge files read column-wise by pyarrow (C++, on every core), with the line parser's rules.

Splitting, comment and header removal, id validation (on the distinct ids only), time
conversion, the merge of duplicates and the undirected doubling are array operations; only
times that are not whole unix seconds (ISO-8601, fractions) go through Python one by one.
Whatever this reader does not take, or finds wrong, raises ``Unread``: the caller then reads
the file line by line, which names the line of an error.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from graphsvc.domain.ids import ID_MAX, USER_ID_PATTERN
from graphsvc.ops.edge_columns import EdgeColumns, merge_edges
from graphsvc.ops.edge_lines import FUTURE_SLACK_US, HEADER_NAMES, LoadError, parse_time

_BLOCK = 16 << 20
_NO_CELLS = "\x1f"  # a delimiter no valid line holds: each line is one cell, split afterwards


class Unread(Exception):
    """The column reader does not take this file as it is: read it line by line."""


def _looks_csv(path: Path) -> bool:
    """The line parser's choice: a .csv name, or a first line with a comma that is no comment."""
    with path.open("rb") as handle:
        first = handle.readline()
    return path.suffix.lower() == ".csv" or (b"," in first and not first.startswith(b"#"))


def _csv_cells(path: Path) -> tuple[list[pa.Array], int]:
    """CSV cells, trimmed, by column; every row must have the same number of cells."""
    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=_BLOCK),
        convert_options=pacsv.ConvertOptions(
            column_types={f"f{n}": pa.string() for n in range(3)}, strings_can_be_null=False
        ),
    )
    if table.num_columns not in (2, 3):
        raise Unread
    columns = [pc.utf8_trim_whitespace(column.combine_chunks()) for column in table.columns]
    return columns, table.num_columns


def _split_lines(path: Path) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Every non-empty line split on whitespace: the cells, each line's first cell's index and
    its number of cells."""
    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=["line"], block_size=_BLOCK),
        parse_options=pacsv.ParseOptions(
            delimiter=_NO_CELLS, quote_char=False, escape_char=False, double_quote=False
        ),
        convert_options=pacsv.ConvertOptions(
            column_types={"line": pa.string()}, strings_can_be_null=False
        ),
    )
    lines = pc.utf8_trim_whitespace(table.column("line").combine_chunks())
    split = pc.utf8_split_whitespace(lines.filter(pc.greater(pc.utf8_length(lines), 0)))
    sizes = pc.list_value_length(split).to_numpy(zero_copy_only=False).astype(np.int64)
    return split.flatten(), np.cumsum(sizes) - sizes, sizes


def _rows(path: Path) -> tuple[pa.Array, pa.Array, pa.Array, np.ndarray]:
    """Data rows: source and target cells, the time cells of timed rows, which rows are timed."""
    if _looks_csv(path):
        columns, width = _csv_cells(path)
        starts = np.arange(len(columns[0]), dtype=np.int64)
        sizes = np.full(len(starts), width, dtype=np.int64)
        cell = lambda k, at: columns[k].take(at)  # noqa: E731
    else:
        flat, starts, sizes = _split_lines(path)
        cell = lambda k, at: flat.take(at + k)  # noqa: E731
    data = np.flatnonzero(~pc.starts_with(cell(0, starts), "#").to_numpy(zero_copy_only=False))
    starts, sizes = starts[data], sizes[data]
    skip = 0  # header rows, before any data row
    while skip < len(starts) and str(cell(0, starts[skip : skip + 1])[0]).lower() in HEADER_NAMES:
        skip += 1
    starts, sizes = starts[skip:], sizes[skip:]
    if not np.isin(sizes, (2, 3)).all():
        raise Unread
    timed = sizes == 3
    times = cell(2, starts[timed]) if timed.any() else pa.array([], pa.string())
    return cell(0, starts), cell(1, starts), times, timed


def _micros(cells: pa.Array) -> np.ndarray:
    """Time cells to microseconds: whole unix seconds in bulk, anything else one by one."""
    out = np.empty(len(cells), dtype=np.int64)
    whole = pc.ascii_is_decimal(cells).to_numpy(zero_copy_only=False)
    if whole.any():
        try:
            seconds = pc.cast(cells.filter(pa.array(whole)), pa.int64()).to_numpy()
        except pa.ArrowInvalid:  # past int64: far in the future
            raise Unread from None
        latest = (int(time.time() * 1_000_000) + FUTURE_SLACK_US) // 1_000_000
        if seconds.max() > latest:
            raise Unread
        out[whole] = seconds * 1_000_000
    rest = np.flatnonzero(~whole)
    if len(rest):
        try:
            out[rest] = [parse_time(text, "") for text in cells.take(rest).to_pylist()]
        except LoadError:
            raise Unread from None
    return out


def read_columns(
    path: Path, *, undirected: bool = False, prefix: str = "", now: int | None = None
) -> EdgeColumns:
    """The line parser's result, as columns; raises Unread when that parser must decide."""
    src, dst, times, timed = _rows(path)
    lines = len(src)
    encoded = pc.dictionary_encode(pa.concat_arrays([src, dst]))
    names = encoded.dictionary
    if prefix:
        names = pc.binary_join_element_wise(prefix, names, "")
    valid = pc.and_(
        pc.match_substring_regex(names, USER_ID_PATTERN),
        pc.less_equal(pc.utf8_length(names), ID_MAX),
    )
    if pc.all(valid).as_py() is False:
        raise Unread
    order = pc.sort_indices(names).to_numpy().astype(np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    since = np.empty(lines, dtype=np.int64)
    untimed = np.flatnonzero(~timed)
    start = (int(time.time() * 1_000_000) if now is None else now) - lines
    since[untimed] = start + untimed
    since[timed] = _micros(times)
    return merge_edges(
        names.take(pa.array(order)),
        codes[:lines],
        codes[lines:],
        since,
        lines=lines,
        undirected=undirected,
    )
