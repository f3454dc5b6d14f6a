"""The column reader gives the line parser's result: same edges, times, users and counts of
what was skipped, on every shared data set and on the layouts the line parser accepts."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from graphsvc.ops.edge_arrow import Unread, read_columns
from graphsvc.ops.edge_columns import EdgeColumns
from graphsvc.ops.edge_files import EdgeSet, LoadError, read_edge_file, read_edge_lines
from graphsvc.ops.loader import follower_groups

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
EDGE_FILES = ["facebook_combined", "wiki-Vote", "email-Eu-core", "CollegeMsg"]
NOW = 1_750_000_000_000_000


def assert_same(columns: EdgeColumns, lines: EdgeSet) -> None:
    assert isinstance(columns, EdgeColumns)
    assert (columns.lines, columns.self_loops, columns.duplicates) == (
        lines.lines,
        lines.self_loops,
        lines.duplicates,
    )
    assert columns.count == len(lines.edges)
    assert columns.users == lines.users
    assert columns.edges == lines.edges
    assert columns.summary() == lines.summary()
    assert lines.columns().edges == lines.edges  # and back, for graphs built in Python


@pytest.mark.parametrize("name", EDGE_FILES)
@pytest.mark.parametrize("options", [{}, {"prefix": "ds."}, {"undirected": True}])
def test_shared_datasets_read_as_the_line_parser_reads_them(name: str, options: dict) -> None:
    path = DATASETS / f"{name}.txt"
    if not path.exists():
        pytest.skip("shared datasets absent")
    columns = read_columns(path, now=NOW, **options)
    assert_same(columns, read_edge_lines(path, now=NOW, **options))


def test_the_shared_datasets_have_what_the_comparison_needs() -> None:
    """Self-loops (email-Eu-core), duplicates (CollegeMsg), undirected doubling (facebook)."""
    if not DATASETS.exists():
        pytest.skip("shared datasets absent")
    eu = read_columns(DATASETS / "email-Eu-core.txt")
    assert (eu.lines, eu.self_loops) == (25_571, 642)
    assert read_columns(DATASETS / "CollegeMsg.txt").duplicates > 0
    fb = read_columns(DATASETS / "facebook_combined.txt", undirected=True)
    assert fb.count == 2 * fb.lines


@pytest.mark.parametrize(
    "text",
    [
        "# c\n1 2 100\n2 2 101\n1 2 50\n\n3 1 70\n  # indented comment\n1\t3  80\n",
        "a b\nb c\nc a\na b\n",  # untimed: distinct times in file order, ending at NOW
        "a b 100\nb c\nc a 2024-01-02T03:04:05Z\n",  # mixed, ISO-8601
        "src dst\nx y 1.5\n",  # a header row, fractional seconds
    ],
)
@pytest.mark.parametrize("options", [{}, {"prefix": "p."}, {"undirected": True}])
def test_edge_lists(tmp_path: Path, text: str, options: dict) -> None:
    path = tmp_path / "edges.txt"
    path.write_text(text)
    assert_same(read_columns(path, now=NOW, **options), read_edge_lines(path, now=NOW, **options))


@pytest.mark.parametrize(
    "text",
    [
        "src,dst,since\nann,bo,2024-01-02T03:04:05Z\nbo,ann,1704164645.5\nann,bo,100\n",
        "ann,bo\nbo,cy\ncy,cy\n",
        " ann , bo , 7\n",
    ],
)
def test_csv(tmp_path: Path, text: str) -> None:
    path = tmp_path / "edges.csv"
    path.write_text(text)
    assert_same(read_columns(path, now=NOW), read_edge_lines(path, now=NOW))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("edges.csv", "a,b\nb,c,5\n"),  # rows of 2 and 3 cells: the line parser reads it
        ("edges.txt", "a b\n"),  # nothing odd: not handed back
    ],
)
def test_what_the_column_reader_hands_back_still_loads(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert read_edge_file(path, now=NOW).edges == read_edge_lines(path, now=NOW).edges


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 2\nbad{id} 3\n", r"edges.txt:2: 'bad\{id\}' is not a valid user id"),
        ("1 2\n1 2 3 4\n", "edges.txt:2: expected 'src dst \\[time\\]', got 4 fields"),
        ("1 2 5\n1 2 yesterday\n", "edges.txt:2: time 'yesterday' is neither"),
        ("1 2 1700000000000\n", "edges.txt:1: time '1700000000000' is in the future"),
        ("1 2 99999999999999999999999\n", "edges.txt:1: time '9+' is in the future"),
    ],
)
def test_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "edges.txt"
    path.write_text(text)
    with pytest.raises(Unread):
        read_columns(path)
    with pytest.raises(LoadError, match=message):
        read_edge_file(path)


def test_a_prefix_longer_than_an_id_allows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("a b\n")
    with pytest.raises(LoadError, match="is not a valid user id"):
        read_edge_file(path, prefix="x" * 64)


def test_follower_groups_tick_clocks_as_rows_one_by_one() -> None:
    """bulk/load_follows sets clk = max(clk + k, m); one row at a time the clock would be
    clk = max(t, clk + 1) for each row in turn."""
    rng = random.Random(5)
    pairs = {(f"u{rng.randrange(30)}", f"u{rng.randrange(30)}"): rng.randrange(1, 10**6)
             for _ in range(400)}  # fmt: skip
    pairs = {pair: t for pair, t in pairs.items() if pair[0] != pair[1]}
    columns = EdgeSet(edges=pairs).columns()
    groups = [group for batch in follower_groups(columns, 50) for group in batch]
    assert sum(group["k"] for group in groups) == columns.count
    assert len({group["s"] for group in groups}) == len(groups)  # a follower is never split
    for group in groups:
        for start in (0, 999_990, 5 * 10**6):
            clock = start
            for since in group["t"]:
                clock = max(since, clock + 1)
            assert clock == max(start + group["k"], group["m"])
        assert [pairs[(group["s"], d)] for d in group["d"]] == group["t"]
    assert np.all(np.diff(columns.src) >= 0)
