"""The ``graphsvc`` command: serve the API, run the local servers, load and check graphs."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tqdm import tqdm

from graphsvc import localservers
from graphsvc.consistency import check_users
from graphsvc.demo import demo_edges
from graphsvc.evaluation import Dataset, evaluate, read_dataset, table
from graphsvc.generate import SIZES, write_edge_file
from graphsvc.loader import EdgeSet, LoadError, load, read_edge_file, rebuild_mirror
from graphsvc.reconcile import reconcile, reconcile_recent
from graphsvc.relay import relay_once
from graphsvc.runtime import open_service
from graphsvc.service import GraphService
from graphsvc.settings import Settings, get_settings


def _print(line: str) -> None:
    print(line, flush=True)


async def _load(settings: Settings, edges: EdgeSet, progress: bool, online: bool = False) -> None:
    _print(edges.summary())
    async with open_service(settings) as service:
        report = await load(service, edges, progress=progress, online=online, say=_print)
    _print(
        f"loaded {report.edges:,} edges ({report.created:,} new) between {report.users:,} users "
        f"in {report.seconds:.1f}s: {report.edges_per_second:,.0f} edges/s"
    )


async def _batches_of(
    service: GraphService, users: Sequence[str], everyone: bool
) -> AsyncIterator[list[str]]:
    if everyone:
        async for batch in service.graph.user_ids(service.settings.rebuild_batch_users):
            yield batch
    else:
        for start in range(0, len(users), service.settings.rebuild_batch_users):
            yield list(users[start : start + service.settings.rebuild_batch_users])


async def _check(settings: Settings, users: Sequence[str], everyone: bool, repair: bool) -> int:
    found = checked = 0
    async with open_service(settings) as service:
        with tqdm(desc="checked", unit="user") as bar:
            async for batch in _batches_of(service, users, everyone):
                drifts = await check_users(service.graph, service.mirror, batch)
                for drift in drifts:
                    tqdm.write(str(drift))
                found += len(drifts)
                checked += len(batch)
                if repair and drifts:
                    await rebuild_mirror(
                        service, sorted({d.user_id for d in drifts}), progress=False
                    )
                bar.update(len(batch))
    _print(
        f"checked {checked:,} users: {found} drifts" + (" (repaired)" if repair and found else "")
    )
    return 1 if found and not repair else 0


async def _reconcile(
    settings: Settings, users: Sequence[str], everyone: bool, every: float | None
) -> int:
    async with open_service(settings) as service:
        if every is not None:
            await reconcile_recent(service, every, say=_print)
            return 0
        report = await reconcile(service, _batches_of(service, users, everyone))
    for drift in report.drifts:
        _print(str(drift))
    _print(report.line())
    return 1 if report.left else 0


async def _relay(settings: Settings, grace: float | None) -> None:
    async with open_service(settings) as service:
        report = await relay_once(service, grace=grace, progress=True)
    _print(
        f"relayed {report.delivered:,} outbox events: {report.recovered:,} had lost their append "
        f"and were appended now, after repairing {report.repaired:,} users"
    )


async def _rebuild(settings: Settings, users: Sequence[str], everyone: bool) -> None:
    built = 0
    async with open_service(settings) as service:
        async for batch in _batches_of(service, users, everyone):
            built += await rebuild_mirror(service, batch, progress=not everyone)
    _print(f"rebuilt the mirror of {built:,} users")


def _serve(settings: Settings, host: str | None, port: int | None, workers: int | None) -> None:
    import uvicorn

    uvicorn.run(
        "graphsvc.api:create_app",
        factory=True,
        host=host or settings.api_host,
        port=port or settings.api_port,
        workers=workers or settings.api_workers,
        log_level="info",
        access_log=settings.api_access_log,
    )


async def _jobs(settings: Settings) -> None:
    """Finish the fan-outs and erasures a stopped service left, showing progress."""
    async with open_service(settings, resume=True, finish=False) as service:
        pending = await service.graph.pending_work()
        _print(f"{len(pending)} unfinished job(s)")
        with tqdm(desc="edges", unit="edge") as bar:
            while service.background.running():
                await asyncio.sleep(0.5)
                bar.update(service.background.done() - bar.n)
            bar.update(service.background.done() - bar.n)
        left = await service.graph.pending_work()
        _print(f"done; {len(left)} job(s) still pending" if left else "done")


def eval_settings(settings: Settings) -> Settings:
    """The evaluation's own servers: wiped at every run, so never the dev or bench data."""
    return settings.model_copy(
        update={
            "state_dir": settings.state_dir / "eval",
            "neo4j_uri": settings.eval_neo4j_uri,
            "redis_url": settings.eval_redis_url,
            "neo4j_heap": "2g",
            "neo4j_pagecache": "1g",
        }
    )


async def _eval_pymk(
    settings: Settings, data: Dataset, users: int, seed: int, progress: bool
) -> None:
    async with open_service(settings) as service:
        await service.graph.wipe()
        await service.mirror.client.flushdb()  # a cluster client sends it to every primary
        await service.graph.apply_schema()
        results, sampled = await evaluate(
            service, data, seed=seed, users=users, progress=progress, say=_print
        )
    for line in table(data.name, results, sampled):
        _print(line)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphsvc", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the HTTP API (uvicorn)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)

    services = sub.add_parser("services", help="run the local Neo4j and Redis servers")
    services.add_argument("action", choices=["up", "down", "status"])

    load = sub.add_parser("load", help="bulk-load an edge list or CSV file")
    load.add_argument("file", type=Path)
    load.add_argument("--undirected", action="store_true", help="each line follows both ways")
    load.add_argument("--prefix", default="", help="put before every id (e.g. 'fb.')")
    load.add_argument(
        "--online",
        action="store_true",
        help="use transactions even when the offline importer could be used",
    )
    load.add_argument("--no-progress", action="store_true")

    gen = sub.add_parser("gen", help="write a synthetic power-law follow graph (edge list)")
    gen.add_argument("--size", choices=sorted(SIZES), default="S")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--out", type=Path, required=True)

    demo = sub.add_parser("demo", help="load the generated demo graph")
    demo.add_argument("--users", type=int, default=3000)
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--no-progress", action="store_true")

    sub.add_parser("jobs", help="finish status fan-outs and erasures left unfinished")

    ev = sub.add_parser(
        "eval-pymk", help="score suggestions against link-prediction baselines on a graph"
    )
    ev.add_argument("--edges", type=Path, required=True, help="edge list: src dst [unix_ts]")
    ev.add_argument("--interactions", type=Path, help="src dst unix_ts per interaction")
    direction = ev.add_mutually_exclusive_group()
    direction.add_argument("--directed", dest="undirected", action="store_false")
    direction.add_argument("--undirected", dest="undirected", action="store_true")
    ev.add_argument("--users", type=int, default=500, help="users sampled (default 500)")
    ev.add_argument("--seed", type=int, default=1)
    ev.add_argument("--no-progress", action="store_true")

    rec = sub.add_parser("reconcile", help="find and repair drift between the mirror and Neo4j")
    rec.add_argument("users", nargs="*", help="user ids")
    rec.add_argument("--all", action="store_true", help="every user in Neo4j")
    rec.add_argument(
        "--every", type=float, metavar="SECONDS", help="repeat over recently written users"
    )

    rel = sub.add_parser(
        "relay", help="deliver outbox events to the event stream, repairing lost mirror writes"
    )
    rel.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="only events older than this (default: "
        "OUTBOX_GRACE_SECONDS; the API relays continuously, this is for operators)",
    )

    for name, text in (
        ("check", "compare the mirror with Neo4j"),
        ("rebuild", "rebuild the mirror"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("users", nargs="*", help="user ids")
        cmd.add_argument("--all", action="store_true", help="every user in Neo4j")
        if name == "check":
            cmd.add_argument("--repair", action="store_true", help="rebuild users that drifted")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = get_settings()
    try:
        if args.command == "serve":
            _serve(settings, args.host, args.port, args.workers)
        elif args.command == "services":
            if args.action == "status":
                for line in localservers.status(settings):
                    _print(line)
            else:
                getattr(localservers, args.action)(settings)
        elif args.command == "load":
            edges = read_edge_file(args.file, undirected=args.undirected, prefix=args.prefix)
            asyncio.run(_load(settings, edges, not args.no_progress, args.online))
        elif args.command == "gen":
            started = time.perf_counter()
            written = write_edge_file(args.out, SIZES[args.size], seed=args.seed)
            _print(f"wrote {written:,} edges to {args.out} in {time.perf_counter() - started:.1f}s")
        elif args.command == "eval-pymk":
            data = read_dataset(
                args.edges, undirected=args.undirected, interactions=args.interactions
            )
            servers = eval_settings(settings)
            localservers.up(servers, _print)
            asyncio.run(_eval_pymk(servers, data, args.users, args.seed, not args.no_progress))
        elif args.command == "reconcile":
            if not args.users and not args.all and args.every is None:
                raise SystemExit("graphsvc reconcile: name user ids, or pass --all or --every")
            return asyncio.run(_reconcile(settings, args.users, args.all, args.every))
        elif args.command == "relay":
            asyncio.run(_relay(settings, args.grace))
        elif args.command == "jobs":
            asyncio.run(_jobs(settings))
        elif args.command == "demo":
            asyncio.run(_load(settings, demo_edges(args.users, args.seed), not args.no_progress))
        elif args.command in ("check", "rebuild"):
            if not args.users and not args.all:
                raise SystemExit(f"graphsvc {args.command}: name user ids or pass --all")
            if args.command == "check":
                return asyncio.run(_check(settings, args.users, args.all, args.repair))
            asyncio.run(_rebuild(settings, args.users, args.all))
    except (LoadError, localservers.ServerError) as exc:
        print(f"graphsvc: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
