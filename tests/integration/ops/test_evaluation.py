"""The offline evaluation: the metrics, the baselines' exclusion, the summary over seeds, and
`graphsvc ranker eval` end to end (on its own real Neo4j and Redis, which it starts and wipes).
The split is in `tests/unit/ops/evaluation/test_evaluation_split.py`."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from graphsvc.bootstrap import Services
from graphsvc.ops import cli
from graphsvc.ops.data.generate import generate
from graphsvc.ops.evaluation import offline as evaluation
from graphsvc.ops.evaluation.offline import (
    AS_LOADED,
    METHODS,
    Baselines,
    Dataset,
    Scores,
    SeedResult,
    Split,
    evaluate_seeds,
    ndcg_at_k,
    read_first,
    score,
    summarize,
    table,
)

pytestmark = pytest.mark.long  # minutes: handed out first on a parallel run


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
    result = score(recommended, held, catalog=10, backs={"a": {"x"}})
    assert result.precision == pytest.approx((2 / 10 + 0) / 2)
    assert result.recall == pytest.approx((2 / 2 + 0) / 2)
    assert result.mrr == pytest.approx((1 / 2 + 0) / 2)
    assert result.ndcg == pytest.approx((0.650921 + 0) / 2, abs=1e-6)
    assert result.coverage == pytest.approx(5 / 10)
    assert result.discovery == pytest.approx((1 / 10 + 0) / 2)  # x is a follow-back


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
    scores = {m: Scores(0.01, 0.02, 0.03, 0.04, 0.5, 0.01) for m in METHODS}
    scores["service"] = Scores(service, 0.2, 0.3, 0.4, 0.6, service / 2)
    scores["Adamic-Adar"] = Scores(adamic_adar, 0.1, 0.2, 0.3, 0.4, adamic_adar)
    return SeedResult(seed, 50, scores, 400 + seed, 100 + seed)


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
    assert lines[-2] == (
        "service / best of (CN, AA, RA) precision@10: 1.29x "
        "(per seed: 1.50x, 1.20x, 1.20x; the best: Adamic-Adar)"
    )
    assert lines[-1] == (
        "held-out follow-backs (the reverse follow in training) per seed: "
        "101 of 401, 102 of 402, 103 of 403"
    )
    assert lines[2].split()[-3:] == ["0.1500", "±", "0.0300"]  # precision on discoveries
    loaded = json.loads(json.dumps(summary.as_json(), allow_nan=False))
    assert loaded["seeds"] == [1, 2, 3] and len(loaded["per_seed"]) == 3
    assert loaded["summary"]["service"]["ndcg"]["mean"] == pytest.approx(0.4)
    assert loaded["summary"]["service"]["discovery"]["mean"] == pytest.approx(0.15)
    assert loaded["per_seed"][0]["follow_backs"] == 101
    assert loaded["per_seed"][0]["held_out"] == 401
    one = summarize(data, 1_000, runs[:1])
    assert one.spread["service"]["precision"].std is None  # no spread from one seed
    assert "0.3000 ± -" in table(one)[2]


def test_the_service_as_loaded_has_its_row_and_lift_only_with_a_first_graph() -> None:
    data = Dataset("tiny", [], undirected=False)
    runs = [_result(1, 0.30, 0.20), _result(2, 0.24, 0.20)]
    plain = summarize(data, 1_000, runs)
    assert AS_LOADED not in plain.spread and "first" not in plain.as_json()
    assert not any(AS_LOADED in line or "loaded first" in line for line in table(plain))
    for run, loaded in zip(runs, (0.10, 0.30), strict=True):
        run.scores = {AS_LOADED: Scores(loaded, 0.1, 0.1, 0.1, 0.3, loaded)} | run.scores
    summary = summarize(data, 1_000, runs, "other, directed")
    assert summary.lift.ratio == pytest.approx(1.35)  # the service's own lift is unchanged
    assert summary.lift_as_loaded is not None
    assert summary.lift_as_loaded.ratio == pytest.approx(1.0)
    assert summary.lift_as_loaded.per_seed == pytest.approx([0.5, 1.5])
    lines = table(summary)
    assert lines[0].endswith("users sampled per seed: 50, 50; loaded first: other, directed)")
    assert [line.split()[0] for line in lines[2:4]] == ["service,", "service"]
    assert lines[2].split()[3:6] == ["0.2000", "±", "0.1414"]
    assert lines[-3] == (
        "service, as loaded / best of (CN, AA, RA) precision@10: 1.00x "
        "(per seed: 0.50x, 1.50x; the best: Adamic-Adar)"
    )
    assert lines[-2].startswith("service / best of (CN, AA, RA) precision@10: 1.35x ")
    loaded = json.loads(json.dumps(summary.as_json(), allow_nan=False))
    assert loaded["first"] == "other, directed"
    assert loaded["lift_as_loaded"]["per_seed"] == pytest.approx([0.5, 1.5])
    assert loaded["summary"][AS_LOADED]["precision"]["mean"] == pytest.approx(0.2)
    assert loaded["per_seed"][1]["scores"][AS_LOADED]["precision"] == pytest.approx(0.3)


@pytest.mark.skipif(shutil.which("java") is None, reason="ranker eval runs its own local Neo4j")
def test_ranker_evaluation_gives_the_same_numbers_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 2 after seed 1 in one run equals seed 2 alone (the stores are wiped per seed);
    the second run also goes through an ``after_load`` hook, which sees the loaded training
    graph before the service is asked and changes nothing."""
    path = tmp_path / "small.txt"
    path.write_text("".join(f"{s} {d} {t}\n" for s, d, t in generate(400, 4_000, seed=3)))
    base = ["ranker", "eval", "--edges", str(path), "--directed", "--users", "60", "--no-progress"]
    # as served: the worker's training cycle runs on each training graph, its report is said,
    # and the ranker served is the one it promoted: its model (v1), or, when it rejected its
    # model (v1), the best heuristic stored beside it (v2); never the built-in default
    assert cli.main([*base, "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "ranker: trigger: evaluation; holdout: newest" in out
    served = "v1" if "v1 promoted (" in out else "v2"
    assert served == "v1" or "is served instead" in out
    assert f"serving {served}" in out and "serving the default" not in out
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
        users = await services.core.neo4j.snapshots.user_count()
        seen.append(users)
        return f"hook: {users} users loaded, {len(cut.train)} training follows"

    async def hooked(*args: Any, **kwargs: Any) -> Any:
        # the CLI passes its own after_load (None with --ranker default): this one replaces it
        return await evaluate_seeds(*args, **{**kwargs, "after_load": hook})

    monkeypatch.setattr(evaluation, "evaluate_seeds", hooked)  # the command imports it on use
    assert cli.main([*base, "--seed", "2", "--json", str(tmp_path / "two.json")]) == 0
    out = capsys.readouterr().out
    assert seen and seen[0] > 300 and out.index("hook: ") < out.index("small (")
    both = json.loads((tmp_path / "both.json").read_text())
    two = json.loads((tmp_path / "two.json").read_text())
    assert [r["seed"] for r in both["per_seed"]] == [1, 2] and two["seeds"] == [2]
    assert two["per_seed"][0] == both["per_seed"][1]


@pytest.mark.skipif(shutil.which("java") is None, reason="ranker eval runs its own local Neo4j")
def test_ranker_eval_with_a_first_graph_scores_the_service_as_loaded_and_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first graph is loaded whole before the training graph: the ``after_load`` hook runs
    on it alone, then on both; the service is scored as loaded and again after, and the
    baselines are those of the same seed without it (the training graph's alone); the second
    answers are computed after the hook, none read from the cache the first ones filled."""
    path = tmp_path / "small.txt"
    path.write_text("".join(f"{s} {d} {t}\n" for s, d, t in generate(400, 4_000, seed=3)))
    first = tmp_path / "first.txt"
    first.write_text("".join(f"{s} {d}\n" for s, d, _ in generate(120, 600, seed=5)))
    base = ["ranker", "eval", "--edges", str(path), "--directed", "--users", "60", "--no-progress"]
    base += ["--ranker", "default", "--seed", "2"]
    seen: list[int] = []

    async def hook(services: Services, cut: Split) -> str:
        seen.append(await services.core.neo4j.snapshots.user_count())
        return f"hook: {len(cut.train)} follows"

    async def hooked(*args: Any, **kwargs: Any) -> Any:
        return await evaluate_seeds(*args, **{**kwargs, "after_load": hook})

    assert cli.main([*base, "--json", str(tmp_path / "alone.json")]) == 0
    capsys.readouterr()
    monkeypatch.setattr(evaluation, "evaluate_seeds", hooked)  # the command imports it on use
    hits = REGISTRY.get_sample_value("graphsvc_suggestion_cache_total", {"result": "hit"}) or 0
    assert cli.main([*base, "--first", str(first), "--json", str(tmp_path / "first.json")]) == 0
    # asked again after the hook, the service computes its lists anew: none is the cached one
    # of the ranker that served as loaded
    again = REGISTRY.get_sample_value("graphsvc_suggestion_cache_total", {"result": "hit"}) or 0
    assert again == hits
    out = capsys.readouterr().out
    assert "first: first, directed, " in out
    assert seen[0] == len(read_first(first, undirected=False).edges.ids)  # the first graph alone
    assert len(seen) == 2 and seen[1] > seen[0] + 300  # then the training graph beside it
    lines = out[out.index("small (") :].splitlines()
    assert lines[0].endswith("; loaded first: first, directed)")
    assert [line.split()[0] for line in lines[2:10]] == [
        "service,",
        *[m.split()[0] for m in METHODS],
    ]
    assert lines[2].startswith(AS_LOADED)
    assert lines[10].startswith("service, as loaded / best of (CN, AA, RA) precision@10: ")
    assert lines[11].startswith("service / best of (CN, AA, RA) precision@10: ")
    result = json.loads((tmp_path / "first.json").read_text())
    alone = json.loads((tmp_path / "alone.json").read_text())
    assert result["first"] == "first, directed" and "lift_as_loaded" in result
    assert "first" not in alone and "lift_as_loaded" not in alone
    scores = result["per_seed"][0]["scores"]
    assert list(scores) == [AS_LOADED, *METHODS] and AS_LOADED in result["summary"]
    baselines = {m: alone["per_seed"][0]["scores"][m] for m in METHODS[1:]}
    assert {m: scores[m] for m in METHODS[1:]} == baselines
