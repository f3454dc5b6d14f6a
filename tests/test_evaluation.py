"""The offline evaluation: the split (no leak, random training order), the metrics, the
baselines' exclusion, the summary over seeds, and `graphsvc eval-pymk` end to end (on its own
real Neo4j and Redis, which it starts and wipes)."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from graphsvc.bootstrap import Services
from graphsvc.ops import cli
from graphsvc.ops.cli import pymk
from graphsvc.ops.evaluation import (
    METHODS,
    Baselines,
    Dataset,
    Scores,
    SeedResult,
    Split,
    evaluate_seeds,
    ndcg_at_k,
    score,
    split,
    summarize,
    table,
)
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


def _mutual_graph(seed: int) -> Dataset:
    """An undirected file written as many SNAP files are: most pairs on two lines, one per
    direction (so a careless split could train on one line and hold out the other)."""
    rng = random.Random(seed)
    rows: list[tuple[str, str, int | None]] = []
    for _ in range(3_000):
        a, b = rng.sample(range(300), 2)
        rows.append((f"n{a}", f"n{b}", None))
        if rng.random() < 0.7:
            rows.append((f"n{b}", f"n{a}", None))
    return Dataset("mutual", rows, undirected=True)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_no_held_out_pair_leaks_into_training_in_either_direction(seed: int) -> None:
    data = _mutual_graph(seed)
    lines = {(s, d) for s, d, _ in data.rows}
    assert sum((d, s) in lines for s, d in lines) > 2_000  # many pairs written both ways
    cut = split(data, seed, NOW)
    held = {(u, v) for u, vs in cut.held.items() for v in vs}
    assert held and all((v, u) in held for u, v in held)
    assert not any((u, v) in cut.train or (v, u) in cut.train for u, v in held)
    every = {(a, b) for s, d in lines for a, b in ((s, d), (d, s))}
    assert set(cut.train) | held == every  # nothing lost either: the pairs are partitioned


def _spearman(xs: list[int], ys: list[int]) -> float:
    """Rank correlation of two lists of distinct values."""
    rx = {x: r for r, x in enumerate(sorted(xs))}
    ry = {y: r for r, y in enumerate(sorted(ys))}
    n = len(xs)
    d2 = sum((rx[x] - ry[y]) ** 2 for x, y in zip(xs, ys, strict=True))
    return 1 - 6 * d2 / (n * (n * n - 1))


def test_untimed_training_times_are_a_seeded_random_order_ending_now() -> None:
    data = Dataset("u", [(f"a{n}", f"b{n % 97}", None) for n in range(2_000)], undirected=True)
    first, again, other = (split(data, seed, NOW) for seed in (7, 7, 8))
    assert first.train == again.train and first.train != other.train
    assert all(first.train[(b, a)] == t for (a, b), t in first.train.items())  # both ways
    pairs = sorted((a, b) for a, b in first.train if a < b)
    since = [first.train[p] for p in pairs]
    assert sorted(since) == [NOW - n * 1_000 for n in reversed(range(len(pairs)))]
    assert since != sorted(since)  # not the sorted-pair order (the newest, the highest ids)
    assert abs(_spearman(list(range(len(pairs))), since)) < 0.1
    held = {(min(u, v), max(u, v)) for u, vs in first.held.items() for v in vs}
    assert not held & set(pairs) and len(held) + len(pairs) == 2_000


def test_ndcg_by_hand() -> None:
    assert ndcg_at_k(["x"], {"x"}) == pytest.approx(1.0)
    assert ndcg_at_k(["q", "r", "x"], {"x"}) == pytest.approx(0.5)  # 1/log2(4) over 1
    assert ndcg_at_k(["q", "r"], {"x"}) == 0.0
    # hits at ranks 2 and 4 of two held-out: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["q", "x", "r", "y"], {"x", "y"}) == pytest.approx(expected)
    assert expected == pytest.approx(0.6509, abs=1e-4)
    # more held-out than K: ten hits out of twelve is perfect (the ideal is ten hits)
    truth = {f"t{n}" for n in range(12)}
    assert ndcg_at_k([f"t{n}" for n in range(10)], truth) == pytest.approx(1.0)
    assert ndcg_at_k([f"t{n}" for n in range(12)], truth) == pytest.approx(1.0)  # cut at 10


def test_metrics() -> None:
    held = {"a": {"x", "y"}, "b": {"z"}}
    recommended = {"a": ["q", "x", "r", "y"], "b": ["w"]}
    result = score(recommended, held, catalog=10)
    assert result.precision == pytest.approx((2 / 10 + 0) / 2)
    assert result.recall == pytest.approx((2 / 2 + 0) / 2)
    assert result.mrr == pytest.approx((1 / 2 + 0) / 2)
    assert result.ndcg == pytest.approx((0.650921 + 0) / 2, abs=1e-6)
    assert result.coverage == pytest.approx(5 / 10)


def test_every_baseline_excludes_exactly_the_followed_and_the_user() -> None:
    # a follows b; c follows a but a does not follow c back: c stays a candidate
    edges = [("a", "b"), ("c", "a"), ("d", "c"), ("e", "c"), ("f", "c"), ("d", "b"), ("b", "e")]
    baselines = Baselines(edges, seed=1)
    assert baselines.excluded("a") == {"a", "b"}
    assert baselines.recommend("popularity", "a")[0] == "c"  # the most followed, a follower
    for method in METHODS[1:]:
        for user in baselines.nodes:
            top = baselines.recommend(method, user)
            assert not set(top) & baselines.excluded(user), (method, user)
            assert len(top) == len(set(top)) <= 10


def test_resource_allocation_by_hand() -> None:
    # a follows two hubs (5 neighbours each, both linked to x) and m (linked to y only):
    # x has 2 common neighbours but RA 1/5 + 1/5 = 0.4; y has 1, of degree 2: RA 0.5
    edges = [("a", "h1"), ("a", "h2"), ("a", "m"), ("m", "y"), ("h1", "x"), ("h2", "x")]
    edges += [(hub, f"{hub}-leaf{n}") for hub in ("h1", "h2") for n in range(3)]
    baselines = Baselines(edges, seed=1)
    assert baselines.recommend("common neighbours", "a")[0] == "x"
    assert baselines.recommend("resource allocation", "a")[:2] == ["y", "x"]


def _result(seed: int, service: float, adamic_adar: float) -> SeedResult:
    scores = {m: Scores(0.01, 0.02, 0.03, 0.04, 0.5) for m in METHODS}
    scores["service"] = Scores(service, 0.2, 0.3, 0.4, 0.6)
    scores["Adamic-Adar"] = Scores(adamic_adar, 0.1, 0.2, 0.3, 0.4)
    return SeedResult(seed, 50, scores)


def test_summary_over_seeds_and_its_table_and_json() -> None:
    data = Dataset("tiny", [], undirected=True)
    runs = [_result(1, 0.30, 0.20), _result(2, 0.24, 0.20), _result(3, 0.36, 0.30)]
    summary = summarize(data, 1_000, runs)
    precision = summary.spread["service"]["precision"]
    assert precision.mean == pytest.approx(0.30)
    assert precision.std == pytest.approx(0.06)  # sample standard deviation (n - 1)
    assert (precision.low, precision.high) == (0.24, 0.36)
    assert summary.lift.baseline == "Adamic-Adar"
    assert summary.lift.ratio == pytest.approx(0.30 / (0.70 / 3))
    assert summary.lift.per_seed == pytest.approx([1.5, 1.2, 1.2])
    lines = table(summary)
    assert lines[2].split()[:4] == ["service", "0.3000", "±", "0.0600"]
    assert lines[-1] == (
        "service / best of (CN, AA, RA) precision@10: 1.29x "
        "(per seed: 1.50x, 1.20x, 1.20x; the best: Adamic-Adar)"
    )
    loaded = json.loads(json.dumps(summary.as_json(), allow_nan=False))
    assert loaded["seeds"] == [1, 2, 3] and len(loaded["per_seed"]) == 3
    assert loaded["summary"]["service"]["ndcg"]["mean"] == pytest.approx(0.4)
    one = summarize(data, 1_000, runs[:1])
    assert one.spread["service"]["precision"].std is None  # no spread from one seed
    assert "0.3000 ± -" in table(one)[2]


@pytest.mark.skipif(shutil.which("java") is None, reason="eval-pymk runs its own local Neo4j")
def test_eval_pymk_gives_the_same_numbers_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 2 after seed 1 in one run equals seed 2 alone (the stores are wiped per seed);
    the second run also goes through an ``after_load`` hook, which sees the loaded training
    graph before the service is asked and changes nothing."""
    path = tmp_path / "small.txt"
    path.write_text("".join(f"{s} {d} {t}\n" for s, d, t in generate(400, 4_000, seed=3)))
    base = ["eval-pymk", "--edges", str(path), "--directed", "--users", "60", "--no-progress"]
    # as served: the worker's training cycle runs on each training graph, its report is said,
    # and the ranker served is the one it promoted (the default when it rejected its model)
    assert cli.main([*base, "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "ranker: trigger: evaluation; holdout: newest" in out
    promoted = "v1 promoted (" in out
    assert promoted or "v1 rejected (" in out
    assert ("serving v1" in out) == promoted and ("serving the default" in out) != promoted
    base += ["--ranker", "default"]  # below: the protocol itself, with the built-in weights
    assert cli.main([*base, "--seeds", "1,2", "--json", str(tmp_path / "both.json")]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("small (") :].splitlines()
    assert [line.split()[0] for line in lines[2:9]] == [m.split()[0] for m in METHODS]
    service = [float(x) for x in lines[2].split()[1::3]]
    assert 0 < service[0] <= 1 and 0 < service[2] <= 1  # it recovers held-out follows
    assert lines[9].startswith("service / best of (CN, AA, RA) precision@10: ")

    seen: list[int] = []

    async def hook(services: Services, cut: Split) -> str:
        users = await services.neo4j.snapshots.user_count()
        seen.append(users)
        return f"hook: {users} users loaded, {len(cut.train)} training follows"

    async def hooked(*args: Any, **kwargs: Any) -> Any:
        # the CLI passes its own after_load (None with --ranker default): this one replaces it
        return await evaluate_seeds(*args, **{**kwargs, "after_load": hook})

    monkeypatch.setattr(pymk, "evaluate_seeds", hooked)
    assert cli.main([*base, "--seed", "2", "--json", str(tmp_path / "two.json")]) == 0
    out = capsys.readouterr().out
    assert seen and seen[0] > 300 and out.index("hook: ") < out.index("small (")
    both = json.loads((tmp_path / "both.json").read_text())
    two = json.loads((tmp_path / "two.json").read_text())
    assert [r["seed"] for r in both["per_seed"]] == [1, 2] and two["seeds"] == [2]
    assert two["per_seed"][0] == both["per_seed"][1]
