"""The benchmark's own parts: the graph generator and the guard of its fresh database (the
PostgreSQL baseline has its own module, test_postgres_baseline)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from bench import run as bench_run
from graphsvc.ops.edge_files import read_edge_file
from graphsvc.ops.generate import GraphSize, celebrity_shares, generate, write_edge_file
from graphsvc.ops.local_servers import LocalNeo4j
from graphsvc.settings import LocalServerSettings, Settings


def test_generator_is_deterministic_by_seed() -> None:
    first = list(generate(3_000, 45_000, seed=7))
    assert first == list(generate(3_000, 45_000, seed=7))
    assert first != list(generate(3_000, 45_000, seed=8))


def test_generator_shape() -> None:
    users, edges = 5_000, 100_000
    rows = list(generate(users, edges, seed=3, celebrities=5))
    pairs = {(s, d) for s, d, _ in rows}
    assert len(rows) == len(pairs) == edges
    assert all(s != d for s, d in pairs)
    followers = collections.Counter(d for _, d in pairs)
    for celeb, share in enumerate(celebrity_shares(5)):
        assert abs(followers[celeb] - share * users) <= 1  # 30% ... 10% of everyone
    out = collections.Counter(s for s, _ in pairs)
    assert max(out.values()) <= 2_000
    # heavy tail: the most followed non-celebrity has far more than the median user
    others = sorted((n for u, n in followers.items() if u >= 5), reverse=True)
    assert others[0] > 20 * others[len(others) // 2]
    times = [t for _, _, t in rows]
    assert max(times) - min(times) > 600 * 24 * 3600  # spread over about two years


def test_generated_file_loads_as_written(tmp_path: Path) -> None:
    path = tmp_path / "g.txt"
    assert write_edge_file(path, GraphSize(500, 5_000), seed=2, progress=False) == 5_000
    edges = read_edge_file(path)
    assert len(edges.edges) == 5_000 and edges.self_loops == 0 and edges.duplicates == 0


def test_a_fresh_bench_database_is_refused_on_a_port_another_home_holds(
    tmp_path: Path, server_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench wipes its own Neo4j's files; if another home's server holds the port (the
    test servers here), wiping ours would load the graph on top of that one's data."""
    monkeypatch.setattr(bench_run, "BENCH_SERVERS", LocalServerSettings(state_dir=tmp_path))
    other = LocalNeo4j(server_settings, LocalServerSettings(state_dir=tmp_path))
    assert other.answers() and not other.owned()
    with pytest.raises(SystemExit, match="held by a Neo4j not started from"):
        bench_run.fresh_database(server_settings)
    assert other.answers()  # untouched
