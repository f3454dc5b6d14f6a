"""The first minutes after a fresh load, as a user meets them: `graphsvc load`, then the API
and its worker started and left alone (the worker finds no ranker served and starts its first
training at once). Follows and followers pages are driven by wrk in turns, ten seconds each,
through the first minute and the next; each minute's figures are the sum of its turns.

What it shows: whether anything the load leaves behind (a cold page cache, unplanned
statements, the first training) makes the first minute slower than the next.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench import wrk

TURN_SECONDS = 10
MINUTES = ("first minute", "next minute")
FOLLOW_CONNECTIONS, PAGE_CONNECTIONS = 16, 8


def measure(
    url: str,
    api_key: str,
    targets: list[str],
    celebrity: str,
    viewer: str,
    started: float,
    say: Callable[[str], None],
) -> dict[str, dict[str, Any]]:
    """Per minute since ``started`` (when the API answered) and kind: requests/s and the
    worst turn's p99."""
    found: dict[str, dict[str, Any]] = {}
    run_id = str(int(time.time()))
    follows = [f"/v1/users/cold{run_id}.{{n}}.{i}/following/{t}" for i, t in enumerate(targets)]
    page = [f"/v1/users/{celebrity}/followers?limit=20"]
    for minute, name in enumerate(MINUTES):
        turns: dict[str, list[wrk.WrkResult]] = {"follow": [], "page": []}
        while time.monotonic() - started < 60 * (minute + 1) - TURN_SECONDS:
            turns["follow"].append(
                wrk.run(
                    url,
                    api_key,
                    "PUT",
                    follows,
                    connections=FOLLOW_CONNECTIONS,
                    seconds=TURN_SECONDS,
                )
            )
            turns["page"].append(
                wrk.run(
                    url,
                    api_key,
                    "GET",
                    page,
                    connections=PAGE_CONNECTIONS,
                    seconds=TURN_SECONDS,
                    viewer=viewer,
                )
            )
        while time.monotonic() - started < 60 * (minute + 1):
            time.sleep(0.5)
        for kind, results in turns.items():
            requests = sum(r.requests for r in results)
            seconds = sum(r.seconds for r in results)
            found[f"{name}/{kind}"] = {
                "per_second": requests / seconds if seconds else 0.0,
                "p99_us": max((r.p99_us for r in results), default=0.0),
                "errors": sum(r.errors for r in results),
            }
            figures = found[f"{name}/{kind}"]
            say(
                f"  {name:12} {kind:6} {figures['per_second']:>7,.0f}/s  worst p99 "
                f"{figures['p99_us'] / 1000:,.1f} ms  errors {figures['errors']}"
            )
    return found


def rows(found: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The first minute against the next, per kind: within 1.5x is the target."""
    out = []
    for kind in ("follow", "page"):
        first, then = found.get(f"first minute/{kind}"), found.get(f"next minute/{kind}")
        if not first or not then:
            continue
        slower = then["per_second"] / first["per_second"] if first["per_second"] else float("inf")
        out.append(
            {
                "row": f"(cold) {kind}s in the first minute after a fresh load / the next minute",
                "measured": f"{first['per_second']:,.0f}/s (worst p99 {first['p99_us'] / 1000:,.1f} ms) / "
                f"{then['per_second']:,.0f}/s (worst p99 {then['p99_us'] / 1000:,.1f} ms): "
                f"the next minute {slower:.2f}x the first",
                "target": "<= 1.5x",
                "pass": slower <= 1.5,
            }
        )
    return out
