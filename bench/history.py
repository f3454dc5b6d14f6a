"""The rows of the graph over time and for analysts: changes, growth series and pages within a
time window (celebrity and median user), familiar followers of 40 targets in one call,
distances between 100 random pairs, and an export of the whole graph to Parquet."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from graphsvc.bootstrap import Connections
from graphsvc.domain.model import iso_utc
from graphsvc.settings import Settings

PAIRS = 100  # distance rows: random pairs of users
FAMILIAR_TARGETS = 40
WINDOW_DEPTH = 15_000  # a window ends this deep in the celebrity's followers: past the hot list


async def window_ends(settings: Settings, users: list[str]) -> dict[str, str]:
    """Each user's since_before: the time of its follower WINDOW_DEPTH deep (the middle one
    for a user with fewer), so the windowed page starts where a deep walk would."""
    ends = {}
    async with Connections.open(settings.neo4j, settings.redis) as opened:
        for user in users:
            records, _, _ = await opened.driver.execute_query(
                "MATCH ()-[r:FOLLOWS]->() WHERE r.dst = $id RETURN r.since AS since "
                "ORDER BY r.since DESC",
                id=user,
            )
            times = [r["since"] for r in records]
            deep = times[min(WINDOW_DEPTH, len(times) // 2)] if times else 0
            ends[user] = iso_utc(deep)
    return ends


def paths(picks: Any, ends: dict[str, str]) -> dict[str, list[str]]:
    """The scenarios' requests, by scenario name: each cycles through its list."""
    found: dict[str, list[str]] = {}
    for who, user in (("celebrity", picks.celebrity), ("median", picks.median)):
        found[f"history/changes/{who}"] = [f"/v1/users/{user}/followers/changes?limit=20"]
        found[f"history/series/{who}"] = [f"/v1/users/{user}/followers/series?bucket=hour"]
        found[f"history/window/{who}"] = [
            f"/v1/users/{user}/followers?limit=20&since_before={ends[user]}"
        ]
    targets = ",".join(picks.typical[:FAMILIAR_TARGETS])
    found["relations/familiar_many"] = [
        f"/v1/users/{picks.viewer}/familiar-followers?ids={targets}"
    ]
    celebrities = picks.most_followed
    expr = {"and": [{"followers": celebrities[0]}, {"followers": celebrities[1]},
                    {"not": {"followers": celebrities[2]}}]}  # fmt: skip
    found["relations/audience_count"] = ["/v1/audiences/count", json.dumps({"expr": expr})]
    rng = random.Random(5)
    pairs = [rng.sample(picks.users, 2) for _ in range(PAIRS)]
    found["relations/distance"] = [f"/v1/users/{a}/distance/{b}" for a, b in pairs]
    return found


def measure_export(settings: Settings) -> dict[str, Any]:
    """`graphsvc export` of the whole graph in a process of its own: its time (the export's
    own, without the interpreter's start) and its peak resident memory."""
    with tempfile.TemporaryDirectory() as directory:
        code = (
            "import asyncio, json, resource, sys\n"
            "from pathlib import Path\n"
            "from graphsvc.bootstrap import open_services\n"
            "from graphsvc.ops.data.export import export_parquet\n"
            "from graphsvc.settings import Settings\n"
            "async def main():\n"
            f"    settings = Settings(**{settings_values(settings)!r})\n"
            "    async with open_services(settings, jobs=True) as services:\n"
            "        return await export_parquet(services.maintenance.exports, Path(sys.argv[1]),"
            " settle_seconds=settings.changes.changes_settle_seconds)\n"
            "report = asyncio.run(main())\n"
            "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "print(json.dumps({'seconds': report.seconds, 'rows': report.rows, 'peak_kb': peak}))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, directory], capture_output=True, text=True, check=True
        )
        size = sum(p.stat().st_size for p in Path(directory).iterdir())
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "bytes": size}


def settings_values(settings: Settings) -> dict[str, str]:
    return {"neo4j_uri": settings.neo4j.neo4j_uri, "redis_url": settings.redis.redis_url}


def rows(r: dict[str, dict[str, Any]], export: dict[str, Any] | None) -> list[dict[str, Any]]:
    out = []
    for name, what in (("changes", "changes"), ("series", "hourly series of a week"),
                       ("window", "followers page within a time window")):  # fmt: skip
        for who in ("celebrity", "median"):
            key = f"history/{name}/{who}"
            if key in r:
                s = r[key]
                out.append(_row(f"{what}, {who}: {s['per_second']:,.0f}/s p50 "
                                f"{s['p50_us']:,.0f}us", s, 10_000))  # fmt: skip
    if "relations/familiar_many" in r:
        s = r["relations/familiar_many"]
        out.append(_row(f"familiar followers of {FAMILIAR_TARGETS} targets in one call: "
                        f"{s['per_second']:,.0f}/s p50 {s['p50_us']:,.0f}us", s, 30_000))  # fmt: skip
    if "relations/audience_count" in r:
        s = r["relations/audience_count"]
        out.append(_row("audience count: two celebrities' followers less a third's: "
                        f"{s['per_second']:,.0f}/s p50 {s['p50_us']:,.0f}us", s, 50_000))  # fmt: skip
    if "relations/distance" in r:
        s = r["relations/distance"]
        out.append(_row(f"distance of {PAIRS} random pairs: {s['per_second']:,.0f}/s p50 "
                        f"{s['p50_us']:,.0f}us", s, 50_000))  # fmt: skip
    if export is not None:
        follows = export["rows"]["follows"]
        peak_mb = export["peak_kb"] / 1024
        out.append(
            {
                "row": f"export: {follows:,} follows and {export['rows']['users']:,} users to "
                f"Parquet ({export['bytes'] / 2**20:,.0f} MB) in a process of its own",
                "measured": f"{export['seconds']:.1f} s, peak memory {peak_mb:,.0f} MB",
                "target": "<= 10 s, < 1 GB (S)",
                "pass": export["seconds"] <= 10 and peak_mb < 1024,
            }
        )
    return out


def _row(text: str, s: dict[str, Any], p99_target_us: float) -> dict[str, Any]:
    return {
        "row": text,
        "measured": f"p99 {s['p99_us'] / 1000:,.1f} ms"
        + (f", {s['errors']} errors" if s["errors"] else ""),
        "target": f"p99 <= {p99_target_us / 1000:,.0f} ms",
        "pass": s["p99_us"] <= p99_target_us and not s["errors"],
    }
