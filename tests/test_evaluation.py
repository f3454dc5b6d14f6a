"""The offline evaluation: the split, the metrics, and `graphsvc eval-pymk` end to end (on its
own real Neo4j and Redis, which it starts and wipes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphsvc.ops import cli
from graphsvc.ops.evaluation import Dataset, score, split
from graphsvc.ops.generate import generate

NOW = 1_800_000_000_000_000


def test_timed_split_holds_out_the_newest_tenth_and_shifts_time() -> None:
    rows = [(f"u{n % 7}", f"v{n}", 1_000 + n) for n in range(50)]
    data = Dataset("t", rows, undirected=False, messages=[("u1", "v3", 1_020), ("u1", "v9", 1_047)])
    cut = split(data, seed=1, now_us=NOW)
    held = {(u, v) for u, vs in cut.held.items() for v in vs}
    assert held == {(f"u{n % 7}", f"v{n}") for n in range(45, 50)}  # the newest 5 of 50
    assert len(cut.train) == 45 and not held & set(cut.train)
    assert max(cut.train.values()) < NOW  # the split is "now": training is all in the past
    assert cut.messages == [("u1", "v3", NOW - 25 * 1_000_000)]  # only before the split


def test_untimed_undirected_split_is_seeded_and_holds_out_both_directions() -> None:
    rows = [(f"a{n}", f"b{n % 9}", None) for n in range(100)]
    data = Dataset("u", rows, undirected=True)
    first, again, other = (split(data, seed, NOW) for seed in (4, 4, 5))
    assert first.held == again.held and first.held != other.held
    pairs = {(u, v) for u, vs in first.held.items() for v in vs}
    assert len(pairs) == 20 and all((v, u) in pairs for u, v in pairs)
    assert len(first.train) == 2 * 90


def test_metrics() -> None:
    held = {"a": {"x", "y"}, "b": {"z"}}
    recommended = {"a": ["q", "x", "r", "y"], "b": ["w"]}
    result = score(recommended, held, catalog=10)
    assert result.precision == pytest.approx((2 / 10 + 0) / 2)
    assert result.recall == pytest.approx((2 / 2 + 0) / 2)
    assert result.mrr == pytest.approx((1 / 2 + 0) / 2)
    assert result.coverage == pytest.approx(5 / 10)


@pytest.mark.skipif(shutil.which("java") is None, reason="eval-pymk runs its own local Neo4j")
def test_eval_pymk_gives_the_same_numbers_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "small.txt"
    path.write_text("".join(f"{s} {d} {t}\n" for s, d, t in generate(400, 4_000, seed=3)))
    tables = []
    for _ in range(2):
        argv = ["eval-pymk", "--edges", str(path), "--directed", "--users", "60", "--no-progress"]
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        tables.append(out[out.index("small (") :])
    assert tables[0] == tables[1]
    lines = tables[0].splitlines()
    methods = [line.split()[0] for line in lines[2:8]]
    assert methods == ["service", "random", "popularity", "common", "Adamic-Adar", "Jaccard"]
    service = [float(x) for x in lines[2].split()[1:]]
    assert 0 < service[0] <= 1 and 0 < service[2] <= 1  # it recovers held-out follows
