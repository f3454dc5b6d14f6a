"""graphsvc against its peer, the FastAPI + PostgreSQL service a team would write instead
(``bench.peer``), over HTTP, in the same run.

Both are served by the same HTTP server with the same number of workers, and driven by both
load generators (the bench's own, ``bench.loadgen``, and wrk) at the same concurrency: reads
at 8 connections, follows at 16. For each case and driver, graphsvc runs first and the peer
right after, so both see the same minute of the shared machine. Around every run the CPU time
of every process of each side is read from ``/proc``: the API server, and the stores behind it
(graphsvc: its worker, Neo4j and Redis; the peer: PostgreSQL), which gives each tier's CPU per
request.

graphsvc's reads are made for a viewer (``X-Graph-Viewer``, with a service key that has no
admin scope), so each pays its privacy check as a product's read does; the peer has no
privacy and is sent the same header, which it ignores.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import peer, proc_cpu, wrk
from bench.loadgen import Scenario, run
from graphsvc.ops.servers import processes

READ_CONNECTIONS = 8
WRITE_CONNECTIONS = 16
WRK_SECONDS = 10
SIDES = ("graphsvc", "peer", "minimal")
READ_SIDES = SIDES  # the minimal peer answers reads only
WRITE_SIDES = ("graphsvc", "peer")
DRIVERS = ("loadgen", "wrk")
# The API server's CPU per request (µs) each row's target allows.
READ_CPU_US = {"page": 150, "count": 100}
FOLLOW_CPU_US = 500


class PeerServer:
    """The peer served on its own port, accepting the bench's key."""

    def __init__(
        self,
        dsn: str,
        api_key: str,
        port: int,
        workers: int,
        server: str,
        log: Path,
        *,
        minimal: bool = False,
    ) -> None:
        """``minimal``: the minimal app (``peer.create_minimal_app``), which takes no key."""
        asyncio.run(peer.add_key(dsn, api_key, "make bench"))
        self.url = f"http://127.0.0.1:{port}"
        options = ["--dsn", dsn, "--port", str(port), "--workers", str(workers), "--server", server]
        options += ["--minimal"] if minimal else []
        cmd = [sys.executable, "-m", "bench.peer", *options]
        self.process = processes.spawn(cmd, log, append=False)
        answers = functools.partial(processes.http_ok, f"{self.url}/openapi.json")
        try:
            processes.wait_until(answers, 60, "the peer", self.process, logs=[log])
        except processes.ProcessFailed:
            self.stop()
            raise

    def stop(self) -> None:
        processes.stop(self.process, group=True)


@dataclass(frozen=True)
class Case:
    name: str  # page/celebrity, count/median, follow...
    method: str
    paths: list[str]  # for wrk; "{n}" is the request's number
    kind: str  # the load generator's scenario kind
    user: str
    connections: int
    viewer: str = ""  # the user a read is made for (X-Graph-Viewer); none for writes


def cases(celebrity: str, median: str, targets: list[str], run_id: str, viewer: str) -> list[Case]:
    """The cases; reads are made for ``viewer``, who may see what they read."""
    found = []
    for who, user in (("celebrity", celebrity), ("median", median)):
        page, count = f"/v1/users/{user}/followers?limit=20", f"/v1/users/{user}/counts"
        for name, path, kind in (
            (f"page/{who}", page, "api_page"),
            (f"count/{who}", count, "api_count"),
        ):
            found.append(Case(name, "GET", [path], kind, user, READ_CONNECTIONS, viewer))
    follows = [f"/v1/users/bx{run_id}.wrk.{{n}}.{i}/following/{t}" for i, t in enumerate(targets)]
    found.append(Case("follow", "PUT", follows, "api_follow", "", WRITE_CONNECTIONS))
    return found


def measure(
    plan: list[Case],
    urls: dict[str, str],
    pids: dict[str, dict[str, int]],
    api_key: str,
    targets: list[str],
    run_id: str,
    say: Callable[[str], None],
) -> dict[str, dict[str, Any]]:
    """Every case, driver and side: rate, p50, p99, errors, and CPU per request of each tier
    of the side (``pids[side]``: tier -> process; the tier "API" is the HTTP server).
    Keys: ``"{case}/{driver}/{side}"``."""
    found: dict[str, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=1) as pool:
        for case in plan:
            for driver in DRIVERS:
                for side in WRITE_SIDES if case.name == "follow" else READ_SIDES:
                    if side not in urls:
                        continue
                    before = {tier: proc_cpu.cpu_seconds(pid) for tier, pid in pids[side].items()}
                    if driver == "wrk":
                        result = wrk.run(
                            urls[side],
                            api_key,
                            case.method,
                            case.paths,
                            connections=case.connections,
                            seconds=WRK_SECONDS,
                            viewer=case.viewer,
                        )
                        figures = {
                            "requests": result.requests,
                            "errors": result.errors,
                            "per_second": result.per_second,
                            "p50_us": result.p50_us,
                            "p99_us": result.p99_us,
                        }
                        sent = result.requests
                    else:
                        scenario = Scenario(
                            f"{case.name}/{driver}/{side}",
                            case.kind,
                            case.user,
                            concurrency=case.connections,
                            api_url=urls[side],
                            api_key=api_key,
                            targets=targets,
                            run_id=f"{run_id}{side[0]}",
                            warmup=50,
                            max_requests=200_000,
                            viewer=case.viewer,
                        )
                        outcome = pool.submit(run, scenario).result()
                        lat = sorted(outcome.latencies_us)
                        figures = {
                            "requests": outcome.requests,
                            "errors": outcome.errors,
                            "per_second": outcome.requests / outcome.seconds,
                            "p50_us": lat[len(lat) // 2] if lat else float("nan"),
                            "p99_us": lat[min(len(lat) - 1, int(len(lat) * 0.99))]
                            if lat
                            else float("nan"),
                        }
                        sent = outcome.requests + outcome.errors + scenario.warmup
                    figures["cpu_us_by_tier"] = (
                        {
                            tier: (proc_cpu.cpu_seconds(pid) - before[tier]) / sent * 1e6
                            for tier, pid in pids[side].items()
                        }
                        if sent
                        else {}
                    )
                    figures["cpu_us_per_request"] = figures["cpu_us_by_tier"].get("API", 0.0)
                    name = f"{case.name}/{driver}/{side}"
                    found[name] = figures
                    say(
                        f"  {name:32} {figures['per_second']:>9,.0f}/s  p50 {figures['p50_us']:>8,.0f}us"
                        f"  p99 {figures['p99_us']:>9,.0f}us  CPU/req {_tiers(figures)}"
                        + (f"  errors {figures['errors']}" if figures["errors"] else "")
                    )
    return found


def rows(found: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per case and driver: graphsvc / peer throughput, the tail of each, and the CPU
    each server spent per request; with the targets."""
    table = []
    names = sorted({name.rsplit("/", 2)[0] for name in found}, key=_order)
    for case in names:
        for driver in DRIVERS:
            ours, theirs = (
                found.get(f"{case}/{driver}/graphsvc"),
                found.get(f"{case}/{driver}/peer"),
            )
            if ours is None or theirs is None:
                continue
            least = found.get(f"{case}/{driver}/minimal")
            ratio = _ratio(ours, theirs)
            tail = ours["p99_us"] / ours["p50_us"] if ours["p50_us"] else float("inf")
            api_cpu = ours.get("cpu_us_per_request", 0.0)
            if case == "follow":
                target = f">= 1.0x the peer; p99 <= 50 ms; API CPU <= {FOLLOW_CPU_US} us"
                passed = ratio >= 1.0 and ours["p99_us"] <= 50_000 and api_cpu <= FOLLOW_CPU_US
            else:
                most = READ_CPU_US[case.split("/")[0]]
                target = (
                    f">= 1.5x the peer, >= 1.2x the minimal peer; p99 <= 3x p50; "
                    f"API CPU <= {most} us"
                )
                passed = (
                    ratio >= 1.5
                    and (least is None or _ratio(ours, least) >= 1.2)
                    and tail <= 3
                    and api_cpu <= most
                )
            minimal = (
                f"; minimal peer (no key) {_figures(least)}, graphsvc/minimal "
                f"{_ratio(ours, least):.2f}x, CPU/request {_tiers(least)}"
                if least is not None
                else ""
            )
            table.append(
                {
                    "row": f"(vs peer) {case}, {driver}, {_connections(case)} connections: graphsvc "
                    f"{_figures(ours)}; peer (FastAPI + PostgreSQL) {_figures(theirs)}",
                    "measured": f"graphsvc/peer {ratio:.2f}x; graphsvc p99/p50 {tail:.1f}; CPU/request "
                    f"graphsvc {_tiers(ours)}; peer {_tiers(theirs)}{minimal}",
                    "target": target,
                    "pass": passed,
                }
            )
    return table


def _ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> float:
    return ours["per_second"] / theirs["per_second"] if theirs["per_second"] else 0.0


def _tiers(figures: dict[str, Any]) -> str:
    tiers = figures.get("cpu_us_by_tier", {})
    return " + ".join(f"{tier} {us:,.0f}us" for tier, us in tiers.items()) or "-"


def _order(case: str) -> tuple[int, str]:
    return (["page", "count", "follow"].index(case.split("/")[0]), case)


def _connections(case: str) -> int:
    return WRITE_CONNECTIONS if case == "follow" else READ_CONNECTIONS


def _figures(f: dict[str, Any]) -> str:
    errors = f" ({f['errors']} errors)" if f["errors"] else ""
    return (
        f"{f['per_second']:,.0f}/s p50 {f['p50_us'] / 1000:,.2f} ms p99 "
        f"{f['p99_us'] / 1000:,.2f} ms{errors}"
    )
