"""The benchmark's own parts: the graph generator, the guard of its fresh database, wrk's
reports, the CPU readings, the peer's cursors and the privacy settings it gives the graph (the
PostgreSQL baseline has its own module, test_postgres_baseline)."""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi import HTTPException

from bench import peer, proc_cpu, write_costs, wrk
from bench import run as bench_run
from graphsvc.domain.privacy import PrivacyEdit, Visibility
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.generate import GraphSize, celebrity_shares, generate, write_edge_file
from graphsvc.ops.servers.local_servers import LocalNeo4j
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


WRK_REPORT = """Running 10s test @ http://127.0.0.1:28000
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.61ms    1.02ms  40.50ms   93.12%
    Req/Sec     3.07k   150.22     3.30k    78.00%
  Latency Distribution
     50%    2.45ms
     75%    2.80ms
     90%    3.33ms
     99%   82.53ms
  30567 requests in 10.00s, 9.87MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   3056.70
Transfer/sec:      0.99MB
"""


def test_wrk_reports_are_read_in_microseconds_with_every_error() -> None:
    result = wrk.parse(WRK_REPORT)
    assert (result.requests, result.seconds, result.per_second) == (30567, 10.0, 3056.70)
    assert (result.p50_us, result.p99_us) == (2450.0, 82530.0)
    assert result.errors == 2 + 1 + 4
    assert wrk.parse(WRK_REPORT.replace("82.53ms", "1.20s")).p99_us == 1_200_000.0
    with pytest.raises(wrk.WrkError, match="cannot read"):
        wrk.parse("wrk: connection refused")


def test_a_child_that_ends_keeps_its_cpu_in_the_reading() -> None:
    """As Redis's forked rewrite does: a child burns CPU and ends between two readings."""
    me = os.getpid()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time() + 0.3\n"
            "while time.process_time() < t: pass\ninput()",
        ],
        stdin=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while proc_cpu.cpu_seconds(child.pid) < 0.25:
        assert time.monotonic() < deadline, "the child never burnt its CPU"
        time.sleep(0.05)
    while_running = proc_cpu.cpu_seconds(me)
    child.communicate(b"\n", timeout=30)  # it ends, and is waited for
    assert proc_cpu.cpu_seconds(me) >= while_running


def test_the_cpu_of_a_process_and_its_listener_are_found() -> None:
    me = os.getpid()
    before = proc_cpu.cpu_seconds(me)
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:  # burn 0.2 s of CPU
        pass
    assert proc_cpu.cpu_seconds(me) - before >= 0.1
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert proc_cpu.listener(port) == me
    assert proc_cpu.listener(port) is None


def test_peer_cursors_round_trip_and_refuse_tampering() -> None:
    cursor = peer.encode_cursor(1_700_000_000_123_456, "alice")
    assert peer.decode_cursor(cursor) == (1_700_000_000_123_456, "alice")
    body, _, mac = cursor.partition(".")
    with pytest.raises(HTTPException):
        peer.decode_cursor(f"{body}.{mac[::-1]}")
    assert peer.iso(1_700_000_000_123_456) == "2023-11-14T22:13:20.123456Z"


def test_the_privacy_plan_restricts_its_share_the_same_way_each_time_and_spares_the_kept() -> None:
    """The bench restricts 5% of the users, drawn with a fixed seed (so a reused graph is
    given the same plan), spread over every kind of setting, and never a user whose lists
    the read rows measure."""
    users = [str(n) for n in range(10_000)]
    keep = {str(n) for n in range(0, 10_000, 7)}
    own = PrivacyEdit(followers_visibility=Visibility.FOLLOWERS)
    plan = bench_run.privacy_plan(users, keep, {"3": own})
    assert plan == bench_run.privacy_plan(list(reversed(users)), keep, {"3": own})
    assert len(plan) == 500 and plan["3"] == own
    assert not keep & plan.keys()
    drawn = collections.Counter(edit for user, edit in plan.items() if user != "3")
    for share, edit in bench_run.PRIVACY_MIX:
        assert abs(drawn[edit] - share * 499) <= 1
    summary = bench_run.plan_summary(plan)
    assert summary["locked=true"] == drawn[PrivacyEdit(locked=True)]
    assert summary["followers_visibility=followers"] == drawn[own] + 1
    assert bench_run.privacy_plan(users, keep, {"3": own}, seed=2) != plan


def test_the_cold_minute_compares_the_first_minute_with_the_next() -> None:
    from bench import cold_minute

    found = {
        "first minute/follow": {"per_second": 300.0, "p99_us": 90_000.0, "errors": 0},
        "next minute/follow": {"per_second": 600.0, "p99_us": 40_000.0, "errors": 0},
        "first minute/page": {"per_second": 1_500.0, "p99_us": 9_000.0, "errors": 0},
        "next minute/page": {"per_second": 1_600.0, "p99_us": 8_000.0, "errors": 0},
    }
    follows, pages = cold_minute.rows(found)
    assert follows["pass"] is False and "2.00x" in follows["measured"]
    assert pages["pass"] is True and "1.07x" in pages["measured"]
    assert cold_minute.rows({"first minute/page": found["first minute/page"]}) == []


def test_the_write_cost_table_names_every_process_and_step() -> None:
    sides = [
        write_costs.Side(
            "Neo4j alone", 1000.0, 10.0, 20.0, {"this process": 250, "Neo4j": 700}, {}, 0, 0
        ),
        write_costs.Side(
            "service follow",
            600.0,
            24.0,
            43.0,
            {"Neo4j": 1363, "this process": 711, "Redis": 165},
            {"locks": 0.07, "neo4j": 13.3, "mirror": 6.5},
            16.0,
            1,
        ),
    ]
    lines = write_costs.table(sides, {"baselines/follow_only": 32.0})
    assert lines[0].index("this process") < lines[0].index("Neo4j") < lines[0].index("Redis")
    assert lines[1] == "Neo4j alone | 1,000 | 10.0 | 20.0 | 250, 700, 0 | -"
    assert (
        lines[2]
        == "service follow | 600 | 24.0 | 43.0 | 711, 1,363, 165 | 16.0, 0.07, 13.30, 6.50, 1"
    )
    assert lines[3] == "db hits per follow, baselines/follow_only: 32"
    assert write_costs.targets(300)[:3] == ["0", "1", "2"] and write_costs.targets(300)[-1] == "291"
