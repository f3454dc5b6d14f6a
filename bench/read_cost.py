"""The API's own CPU per read, in process: the served app called as an ASGI app, without an
HTTP server, for the bench's four read rows (a page and the counts of the celebrity and of a
median user, made for the bench's viewer with the bench's key). What it prints is the CPU
the app and its store clients spend per request, the share of a served read that graphsvc's
code decides (the HTTP server adds its own, the same for any app it serves).

The event loop is uvloop's, as the served API's. Run it against the bench's servers (loaded by ``make bench``), from two checkouts alternated
to compare them, or with ``--profile`` to see where a row's CPU goes:

    python -m bench.read_cost --requests 4000 [--profile page/celebrity]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from collections.abc import Awaitable, Callable
from typing import Any

import uvloop

from bench.run import BENCH_SETTINGS, DATA, bench_key, pick_users
from graphsvc.api.app import create_app
from graphsvc.bootstrap import open_serving
from graphsvc.settings import Settings

AT_ONCE = 8  # as the bench's read rows: 8 connections


def _scope(path: str, query: str, token: str, viewer: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {token}".encode()),
            (b"x-graph-viewer", viewer.encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def _caller(app: Any, scope: dict[str, Any]) -> Callable[[], Awaitable[int]]:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def call() -> int:
        status = 0

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(dict(scope), receive, send)
        return status

    return call


async def _measure(call: Callable[[], Awaitable[int]], requests: int) -> tuple[float, float]:
    """(CPU microseconds per request, requests per second), AT_ONCE requests at a time."""
    todo = iter(range(requests))

    async def lane() -> None:
        for _ in todo:
            status = await call()
            if status != 200:
                raise SystemExit(f"a read answered {status}")

    cpu, began = time.process_time(), time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(AT_ONCE)))
    took = time.perf_counter() - began
    return 1e6 * (time.process_time() - cpu) / requests, requests / took


async def main(
    requests: int, profile: str | None, rounds: int, budgets: bool, sort: str = "tottime"
) -> None:
    settings = Settings(**BENCH_SETTINGS, development=True).with_values(
        rate_limits_enabled=budgets, rate_limit_reads="1000000000/minute"
    )
    token = await bench_key(settings)
    picks = pick_users(DATA / "S-seed1.txt", [])
    rows = {}
    for who, user in (("celebrity", picks.celebrity), ("median", picks.median)):
        rows[f"page/{who}"] = (f"/v1/users/{user}/followers", "limit=20")
        rows[f"count/{who}"] = (f"/v1/users/{user}/counts", "")
    async with open_serving(settings) as services:
        app = create_app(settings, services)
        calls = {
            name: _caller(app, _scope(path, query, token, picks.viewer))
            for name, (path, query) in rows.items()
        }
        for call in calls.values():  # warm: the key cache, the scripts, the connections
            await _measure(call, 200)
        if profile is not None:
            profiler = cProfile.Profile()
            profiler.enable()
            await _measure(calls[profile], requests)
            profiler.disable()
            pstats.Stats(profiler).sort_stats(sort).print_stats(45)
            return
        for n in range(rounds):
            for name, call in calls.items():
                cpu_us, rate = await _measure(call, requests)
                print(f"round {n + 1} {name:16} {cpu_us:7,.0f} us CPU/request  {rate:9,.0f}/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--no-budgets", action="store_true", help="rate limits off, as the bench's peer rows"
    )
    parser.add_argument(
        "--profile", choices=["page/celebrity", "page/median", "count/celebrity", "count/median"]
    )
    options = parser.parse_args()
    uvloop.run(main(options.requests, options.profile, options.rounds, not options.no_budgets))
