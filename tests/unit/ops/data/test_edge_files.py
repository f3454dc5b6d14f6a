"""The edge-file reader: SNAP's formats (space, tab or comma separated, with or without times,
with comments and headers, compressed or not) read into distinct edges, and every bad row
refused by one error that names the file and the line."""

from __future__ import annotations

import bz2
import gzip
import random
from pathlib import Path

import numpy as np
import pytest

from graphsvc.ops.data import edge_files
from graphsvc.ops.data.edge_files import Edges, LoadError, read_edge_file, read_edge_rows
from graphsvc.ops.data.loader import follower_groups
from tests.support.paths import DATASETS

NOW = 1_750_000_000_000_000
SECOND = 1_000_000


def expected(text: str, *, prefix: str = "", undirected: bool = False) -> dict:
    """What a file's rows mean, worked out plainly row by row: (src, dst) -> earliest since."""
    rows = [line.split() for line in text.splitlines()]
    rows = [cells for cells in rows if cells and not cells[0].startswith("#")]
    start = NOW - len(rows)
    pairs: dict[tuple[str, str], int] = {}
    for n, cells in enumerate(rows):
        since = int(cells[2]) * SECOND if len(cells) == 3 else start + n
        src, dst = prefix + cells[0], prefix + cells[1]
        for pair in [(src, dst), (dst, src)] if undirected else [(src, dst)]:
            if pair[0] != pair[1]:
                pairs[pair] = min(pairs.get(pair, since), since)
    return pairs


def written(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".bz2"):
        data = bz2.compress(data)
    path.write_bytes(data)
    return path


# -- good files --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["facebook_combined", "wiki-Vote", "email-Eu-core", "CollegeMsg"])
@pytest.mark.parametrize("options", [{}, {"prefix": "ds."}, {"undirected": True}])
def test_the_shared_datasets_read_as_their_rows_say(name: str, options: dict) -> None:
    path = DATASETS / f"{name}.txt"
    if not path.exists():
        pytest.skip("shared datasets absent")
    edges = read_edge_file(path, now=NOW, **options)
    assert edges.edges == expected(path.read_text(), **options)
    assert edges.users == sorted({uid for pair in edges.edges for uid in pair})


def test_the_shared_datasets_counts_match_snap() -> None:
    """Self-loops (email-Eu-core), comments (wiki-Vote), duplicates (CollegeMsg) and the
    undirected doubling (facebook), as shared/README.md gives them."""
    if not DATASETS.exists():
        pytest.skip("shared datasets absent")
    eu = read_edge_file(DATASETS / "email-Eu-core.txt")
    assert (eu.lines, eu.self_loops, eu.count + eu.self_loops) == (25_571, 642, 25_571)
    wiki = read_edge_file(DATASETS / "wiki-Vote.txt")
    assert (wiki.lines, wiki.count, len(wiki.ids)) == (103_689, 103_689, 7_115)
    college = read_edge_file(DATASETS / "CollegeMsg.txt")
    assert (college.lines, college.count, college.duplicates) == (59_835, 20_296, 39_539)
    fb = read_edge_file(DATASETS / "facebook_combined.txt", undirected=True)
    assert (fb.lines, fb.count, len(fb.ids)) == (88_234, 2 * 88_234, 4_039)


@pytest.mark.parametrize(
    "text",
    [
        "# c\n1 2 100\n2 2 101\n1 2 50\n\n3 1 70\n# a comment of words\n1 3 80\n",
        "a b\nb c\nc a\na b\n",  # untimed: distinct times in file order, ending at NOW
        "# Directed graph\n# FromNodeId\tToNodeId\n30\t1412\n30\t3352\n3352\t30\n",
        "1 2 100\r\n2 3 200\r\n",
        "\n\n1 2\n\n",
    ],
)
@pytest.mark.parametrize("options", [{}, {"prefix": "p."}, {"undirected": True}])
def test_edge_lists(tmp_path: Path, text: str, options: dict) -> None:
    edges = read_edge_file(written(tmp_path, "edges.txt", text), now=NOW, **options)
    assert edges.edges == expected(text, **options)


def test_self_loops_and_duplicates_are_counted(tmp_path: Path) -> None:
    path = written(tmp_path, "edges.txt", "1 2 100\n2 2 101\n1 2 50\n3 1 70\n\n1 3 80\n")
    edges = read_edge_file(path)
    assert (edges.lines, edges.self_loops, edges.duplicates, edges.count) == (5, 1, 1, 3)
    assert edges.summary() == (
        "5 lines: 3 distinct edges, 1 self-loops skipped, 1 duplicates merged"
    )
    assert edges.users == ["1", "2", "3"]  # the self-loop's user follows and is followed


@pytest.mark.parametrize("name", ["edges.txt.gz", "edges.txt.bz2", "edges.csv.gz"])
def test_compressed_files(tmp_path: Path, name: str) -> None:
    sep = "," if ".csv" in name else "\t"
    text = f"# compressed\n1{sep}2{sep}100\n2{sep}3{sep}200\n"
    edges = read_edge_file(written(tmp_path, name, text))
    assert edges.edges == {("1", "2"): 100 * SECOND, ("2", "3"): 200 * SECOND}


def test_csv_with_a_header_iso_times_and_fractions(tmp_path: Path) -> None:
    text = "src,dst,since\nann,bo,2024-01-02T03:04:05Z\nbo,ann,1704164645.5\nann,bo,100\n"
    edges = read_edge_file(written(tmp_path, "edges.csv", text))
    assert edges.edges == {("ann", "bo"): 100 * SECOND, ("bo", "ann"): 1_704_164_645_500_000}
    assert edges.lines == 3


def test_csv_cells_are_trimmed_unquoted_and_may_have_no_time(tmp_path: Path) -> None:
    text = ' ann ,"bo", 7\nbo,cy,\n"cy",ann , 2024-01-02T03:04:05\n'
    edges = read_edge_file(written(tmp_path, "follows.csv", text), now=NOW)
    assert edges.edges == {
        ("ann", "bo"): 7 * SECOND,
        ("bo", "cy"): NOW - 3 + 1,  # untimed: its place among the file's rows
        ("cy", "ann"): 1_704_164_645_000_000,  # ISO-8601 without a zone is UTC
    }


def test_a_comma_makes_a_csv_whatever_the_name(tmp_path: Path) -> None:
    edges = read_edge_file(written(tmp_path, "edges.txt", "a,b\nb,a\n"))
    assert set(edges.edges) == {("a", "b"), ("b", "a")}


@pytest.mark.parametrize("text", ["", "# nothing but comments\n\n#\n", "\n\n"])
def test_an_empty_file_has_no_edges(tmp_path: Path, text: str) -> None:
    edges = read_edge_file(written(tmp_path, "empty.txt", text))
    assert (edges.count, edges.lines, edges.users, edges.edges) == (0, 0, [], {})
    assert list(follower_groups(edges, 10)) == []


def test_rows_unmerged_keep_file_order_duplicates_and_self_loops(tmp_path: Path) -> None:
    path = written(tmp_path, "rows.csv", "src,dst,since\nb,a,5\na,a,\nb,a,3\n")
    rows = read_edge_rows(path, prefix="p.", now=NOW)
    names = rows.names.to_pylist()
    assert [(names[s], names[d]) for s, d in zip(rows.src, rows.dst, strict=True)] == [
        ("p.b", "p.a"),
        ("p.a", "p.a"),
        ("p.b", "p.a"),
    ]
    assert rows.since.tolist() == [5 * SECOND, NOW - 3 + 1, 3 * SECOND]
    assert rows.timed.tolist() == [True, False, True]
    empty = read_edge_rows(written(tmp_path, "empty.txt", "# none\n"))
    assert (len(empty.names), len(empty.src), len(empty.timed)) == (0, 0, 0)


def test_rows_built_in_python_merge_as_a_files_rows_do() -> None:
    edges = Edges.from_rows([("a", "b", 5), ("a", "a", 3), ("a", "b", 2), ("b", "a", 9)])
    assert edges.edges == {("a", "b"): 2, ("b", "a"): 9}
    assert (edges.lines, edges.self_loops, edges.duplicates) == (4, 1, 1)
    both = Edges.from_rows([("a", "b", 5)], undirected=True)
    assert both.edges == {("a", "b"): 5, ("b", "a"): 5}
    assert Edges.from_rows([]).count == 0
    with pytest.raises(LoadError, match=r"^row 2: 'b c' is not a valid user id"):
        Edges.from_rows([("a", "b", 1), ("b c", "a", 2)])


# -- bad rows ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("1 2\nbad{id} 3\n", 2, r"'bad\{id\}' is not a valid user id \(1-64 characters"),
        ("1 2\n3 ..\n", 2, r"'\.\.' is not a valid user id"),
        (f"1 2\n3 {'x' * 65}\n", 2, "'x{65}' is not a valid user id"),
        ("1 2 3 4\n", 1, r"expected 'src dst \[time\]', got 4 fields"),
        ("# c\n\n1 2\n\n# c d e\n1 2 3 4\n", 6, r"expected 'src dst \[time\]', got 4 fields"),
        ("1 2\n3\n", 2, r"expected 'src dst \[time\]', got 1 fields"),
        ("1 2 5\n3 4\n", 2, "expected 3 fields as on line 1, got 2"),
        ("# h\n1 2\n3 4 5\n", 3, "expected 2 fields as on line 2, got 3"),
        ("1 2 5\n\n1 2 yesterday\n", 3, "time 'yesterday' is neither unix seconds nor ISO-8601"),
        ("1 2 5\n1 2 nan\n", 2, "time 'nan' is neither"),
        ("1 2 -5\n", 1, "time '-5' is before 1970"),
        ("1 2 1.5\n1 2 -5\n", 2, "time '-5' is before 1970"),
        ("1 2 1700000000000\n", 1, r"time '1700000000000' is in the future \(milliseconds\?"),
        ("1 2 5\n1 2 99999999999999999999999\n", 2, "time '9{23}' is in the future"),
        ("1 2 2999-01-01T00:00:00Z\n", 1, "time '2999-01-01T00:00:00Z' is in the future"),
        ("# c\n1 2 x\n3 y{ 5\n", 2, "time 'x' is neither"),  # the first bad row of all
        ("# c\n1 y{ x\n", 2, "'y{' is not a valid user id"),
    ],
)
def test_a_bad_row_names_the_file_and_its_line(
    tmp_path: Path, text: str, where: int, message: str
) -> None:
    path = written(tmp_path, "edges.txt", text)
    with pytest.raises(LoadError, match=rf"^{path}:{where}: {message}") as refused:
        read_edge_file(path)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("name", "text", "where", "message"),
    [
        ("edges.csv", "src,dst,since\nann,bo,5\nbo,cy,5,6\n", 3, "expected .+, got 4 fields"),
        ("edges.csv", "src,dst\nann,bo\nbo,c{\n", 3, "'c{' is not a valid user id"),
        ("edges.csv", "ann,bo,5\nbo,cy,soon\n", 2, "time 'soon' is neither"),
        ("edges.txt.gz", "# gz\n1\t2\n\n2\t3\t4\n", 4, "expected 2 fields as on line 2, got 3"),
        ("edges.txt.gz", "1\t2\n2\t{\n", 2, "'{' is not a valid user id"),
    ],
)
def test_bad_rows_of_csv_and_compressed_files(
    tmp_path: Path, name: str, text: str, where: int, message: str
) -> None:
    path = written(tmp_path, name, text)
    with pytest.raises(LoadError, match=rf"^{path}:{where}: {message}"):
        read_edge_file(path)


def test_a_prefix_longer_than_an_id_allows_is_refused(tmp_path: Path) -> None:
    path = written(tmp_path, "edges.txt", "a b\n")
    with pytest.raises(LoadError, match=rf"^{path}:1: 'x{{64}}a' is not a valid user id"):
        read_edge_file(path, prefix="x" * 64)


@pytest.mark.parametrize("bad", ["7 {x}", "7 8 9"])
def test_the_line_is_right_in_a_file_parsed_in_many_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """Blocks parsed on several threads, comments and blank lines among them: the line is
    still the file's."""
    monkeypatch.setattr(edge_files, "_BLOCK", 4096)
    rng = random.Random(3)
    lines = []
    for n in range(30_000):
        roll = rng.random()
        lines.append("# a comment\t" if roll < 0.05 else "" if roll < 0.1 else f"{n} {n + 1}")
    lines[27_000] = bad
    path = written(tmp_path, "big.txt", "\n".join(lines) + "\n")
    with pytest.raises(LoadError, match=rf"^{path}:27001: "):
        read_edge_file(path)
    lines[27_000] = "7 8"
    path.write_text("\n".join(lines) + "\n")
    assert read_edge_file(path).lines == sum(1 for line in lines if line[:1].isdigit())


def test_a_missing_file_or_one_not_utf8_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(LoadError, match=rf"^{missing}: No such file or directory$"):
        read_edge_file(missing)
    latin = written(tmp_path, "latin.txt", "1 2\n3 caf\xe9\n".encode("latin-1"))
    with pytest.raises(LoadError, match=rf"^{latin}: not UTF-8 text$"):
        read_edge_file(latin)


# -- edges to the loader's transactions --------------------------------------------------------


def test_follower_groups_tick_clocks_as_rows_one_by_one() -> None:
    """bulk/load_follows sets clk = max(clk + k, m); one row at a time the clock would be
    clk = max(t, clk + 1) for each row in turn."""
    rng = random.Random(5)
    pairs = {
        (f"u{rng.randrange(30)}", f"u{rng.randrange(30)}"): rng.randrange(1, 10**6)
        for _ in range(400)
    }
    pairs = {pair: t for pair, t in pairs.items() if pair[0] != pair[1]}
    edges = Edges.from_rows((s, d, t) for (s, d), t in pairs.items())
    groups = [group for batch in follower_groups(edges, 50) for group in batch]
    assert sum(group["k"] for group in groups) == edges.count
    assert len({group["s"] for group in groups}) == len(groups)  # a follower is never split
    for group in groups:
        for start in (0, 999_990, 5 * 10**6):
            clock = start
            for since in group["t"]:
                clock = max(since, clock + 1)
            assert clock == max(start + group["k"], group["m"])
        assert [pairs[(group["s"], d)] for d in group["d"]] == group["t"]
    assert np.all(np.diff(edges.src) >= 0)


def test_edge_list_skips_self_loops_and_merges_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("# comment\n1 2 100\n2 2 101\n1 2 50\n3 1 70\n\n1 3 80\n")
    edges = read_edge_file(path, prefix="p.")
    assert edges.edges == {
        ("p.1", "p.2"): 50_000_000,
        ("p.3", "p.1"): 70_000_000,
        ("p.1", "p.3"): 80_000_000,
    }
    assert (edges.lines, edges.self_loops, edges.duplicates) == (5, 1, 1)


def test_undirected_lines_follow_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "friends.txt"
    path.write_text("a b\nb c\n")
    edges = read_edge_file(path, undirected=True)
    assert set(edges.edges) == {("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")}
    # untimed lines get increasing times in file order
    assert edges.edges[("a", "b")] < edges.edges[("b", "c")]


def test_csv_with_header_and_iso_times(tmp_path: Path) -> None:
    path = tmp_path / "edges.csv"
    path.write_text("src,dst,since\nann,bo,2024-01-02T03:04:05Z\nbo,ann,1704164645.5\n")
    edges = read_edge_file(path)
    assert edges.edges == {
        ("ann", "bo"): 1_704_164_645_000_000,
        ("bo", "ann"): 1_704_164_645_500_000,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 2\nbad{id} 3\n", r"edges.txt:2: 'bad\{id\}' is not a valid user id"),
        ("1 2 3 4\n", "edges.txt:1: expected 'src dst \\[time\\]', got 4 fields"),
        ("1 2 yesterday\n", "edges.txt:1: time 'yesterday' is neither"),
        ("1 2 -5\n", "edges.txt:1: time '-5' is before 1970"),
        ("1 2 1700000000000\n", "edges.txt:1: time '1700000000000' is in the future"),
    ],
)
def test_bad_edge_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "edges.txt"
    path.write_text(text)
    with pytest.raises(LoadError, match=message):
        read_edge_file(path)
