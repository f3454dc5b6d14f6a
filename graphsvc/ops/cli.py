"""The ``graphsvc`` command: serve the API, run the local servers, load and check graphs.

Each command is one small function. A failure the operator must act on (a bad edge file, a
local server that does not start, a store that refuses or cannot be reached) ends in one
line on stderr naming the cause (exit 2), never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from neo4j.exceptions import DriverError, Neo4jError
from pydantic import ValidationError
from redis.exceptions import RedisError
from tqdm import tqdm

from graphsvc.bootstrap import Services, open_services
from graphsvc.domain.access import InvalidKeyRequest, key_id_of, parse_scopes
from graphsvc.domain.errors import GraphError
from graphsvc.ops import http_server, keys, local_servers
from graphsvc.ops.consistency import check_users
from graphsvc.ops.demo import demo_edges
from graphsvc.ops.edge_files import Edges, LoadError, read_edge_file
from graphsvc.ops.evaluation import (
    DEFAULT_SEEDS,
    DEFAULT_USERS,
    Dataset,
    Split,
    Summary,
    evaluate_seeds,
    read_dataset,
    table,
)
from graphsvc.ops.generate import SIZES, write_edge_file
from graphsvc.ops.loader import load, rebuild_mirror
from graphsvc.ops.reconcile import reconcile, reconcile_recent, reconcile_rounds
from graphsvc.ops.timeline_check import reconcile_timelines
from graphsvc.ops.train_pymk import TrainError, train
from graphsvc.settings import (
    SECRET_SETTINGS,
    DevelopmentSecrets,
    LocalServerSettings,
    Settings,
    get_local_server_settings,
    get_settings,
    refuse_development_secrets,
)

Command = Callable[[argparse.Namespace, Settings, LocalServerSettings], int | None]


def _print(line: str) -> None:
    print(line, flush=True)


# -- serving and servers ------------------------------------------------------------------------


def _serve(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> int:
    host = args.host or settings.api_host
    try:
        refuse_development_secrets(settings)
    except DevelopmentSecrets as refused:
        print(f"graphsvc serve: {refused}", file=sys.stderr)
        return 2
    workers = args.workers or settings.api_workers
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # /metrics sums every worker's values from files in this directory (a fresh one: the
        # files of a previous run would be counted again)
        shared = local.state_dir / "metrics" / str(os.getpid())
        shutil.rmtree(shared, ignore_errors=True)
        shared.mkdir(parents=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    http_server.run(
        http_server.Serving(
            server=args.server or settings.api_server,
            host=host,
            port=args.port or settings.api_port,
            workers=workers,
            access_log=settings.api_access_log,
        )
    )
    return 0


async def _work(settings: Settings) -> None:
    """Run the worker until SIGINT or SIGTERM; its jobs' records let another resume them."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, main.cancel)
    async with open_services(settings, jobs=True) as services:
        _print(f"graphsvc worker: running (at most {settings.worker_jobs} jobs at once)")
        every = settings.worker_reconcile_seconds
        rounds = (
            None
            if every is None
            else loop.create_task(reconcile_rounds(services, every, say=_print))
        )
        try:
            await services.worker.run()
        except asyncio.CancelledError:
            _print("graphsvc worker: stopping")
        finally:
            if rounds is not None:
                rounds.cancel()


def _worker(_: argparse.Namespace, settings: Settings, __: LocalServerSettings) -> None:
    asyncio.run(_work(settings))


def _services(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> None:
    if args.action == "status":
        for line in local_servers.status(settings, local):
            _print(line)
    else:
        getattr(local_servers, args.action)(settings, local)


# -- loading ------------------------------------------------------------------------------------


async def _load_edges(
    settings: Settings,
    local: LocalServerSettings,
    edges: Edges,
    progress: bool,
    online: bool = False,
) -> None:
    _print(edges.summary())
    async with open_services(settings, jobs=True) as services:
        report = await load(
            services, edges, local=local, progress=progress, online=online, say=_print
        )
    _print(
        f"loaded {report.edges:,} edges ({report.created:,} new) between {report.users:,} users "
        f"in {report.seconds:.1f}s: {report.edges_per_second:,.0f} edges/s"
    )


def _load(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> None:
    edges = read_edge_file(args.file, undirected=args.undirected, prefix=args.prefix)
    asyncio.run(_load_edges(settings, local, edges, not args.no_progress, args.online))


def _demo(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> None:
    edges = demo_edges(args.users, args.seed)
    asyncio.run(_load_edges(settings, local, edges, not args.no_progress))


def _gen(args: argparse.Namespace, _: Settings, __: LocalServerSettings) -> None:
    started = time.perf_counter()
    written = write_edge_file(args.out, SIZES[args.size], seed=args.seed)
    _print(f"wrote {written:,} edges to {args.out} in {time.perf_counter() - started:.1f}s")


# -- the mirror against the truth ----------------------------------------------------------------


async def _batches_of(
    services: Services, users: Sequence[str], everyone: bool
) -> AsyncIterator[list[str]]:
    size = services.settings.rebuild_batch_users
    if everyone:
        async for batch in services.neo4j.snapshots.user_ids(size):
            yield batch
    else:
        for start in range(0, len(users), size):
            yield list(users[start : start + size])


def _named_users(args: argparse.Namespace) -> None:
    if not args.users and not args.all:
        raise SystemExit(f"graphsvc {args.command}: name user ids or pass --all")


async def _check_users(settings: Settings, args: argparse.Namespace) -> int:
    found = checked = 0
    async with open_services(settings, jobs=True) as services:
        with tqdm(desc="checked", unit="user") as bar:
            async for batch in _batches_of(services, args.users, args.all):
                drifts = await check_users(services, batch)
                for drift in drifts:
                    tqdm.write(str(drift))
                found += len(drifts)
                checked += len(batch)
                if args.repair and drifts:
                    users = sorted({d.user_id for d in drifts})
                    await rebuild_mirror(services, users, progress=False)
                bar.update(len(batch))
    repaired = " (repaired)" if args.repair and found else ""
    _print(f"checked {checked:,} users: {found} drifts{repaired}")
    return 1 if found and not args.repair else 0


def _check(args: argparse.Namespace, settings: Settings, _: LocalServerSettings) -> int:
    _named_users(args)
    return asyncio.run(_check_users(settings, args))


async def _rebuild_users(settings: Settings, args: argparse.Namespace) -> None:
    built = 0
    async with open_services(settings, jobs=True) as services:
        async for batch in _batches_of(services, args.users, args.all):
            built += await rebuild_mirror(services, batch, progress=not args.all)
    _print(f"rebuilt the mirror of {built:,} users")


def _rebuild(args: argparse.Namespace, settings: Settings, _: LocalServerSettings) -> None:
    _named_users(args)
    asyncio.run(_rebuild_users(settings, args))


async def _reconcile_users(settings: Settings, args: argparse.Namespace) -> int:
    async with open_services(settings, jobs=True) as services:
        if args.every is not None:
            await reconcile_recent(services, args.every, say=_print)
            return 0
        report = await reconcile(services, _batches_of(services, args.users, args.all))
        for drift in report.drifts:
            _print(str(drift))
        _print(report.line())
        if args.timelines:
            feeds = await reconcile_timelines(services, _batches_of(services, args.users, args.all))
            for drift in feeds.drifts:
                _print(str(drift))
            _print("timelines: " + feeds.line())
            return 1 if report.left or feeds.left else 0
    return 1 if report.left else 0


def _reconcile(args: argparse.Namespace, settings: Settings, _: LocalServerSettings) -> int:
    if not args.users and not args.all and args.every is None:
        raise SystemExit("graphsvc reconcile: name user ids, or pass --all or --every")
    return asyncio.run(_reconcile_users(settings, args))


# -- background work ----------------------------------------------------------------------------


async def _relay_outbox(settings: Settings, grace: float | None) -> None:
    bars: list[tqdm] = []  # shown once this process holds the relay's lease and relays

    def relayed(events: int) -> None:
        if not bars:
            bars.append(tqdm(desc="relayed", unit="event"))
        bars[0].update(events)

    async with open_services(settings, jobs=True) as services:
        try:
            report = await services.relay.once(grace=grace, progress=relayed)
        finally:
            for bar in bars:
                bar.close()
    _print(
        f"relayed {report.delivered:,} outbox events: {report.recovered:,} had lost their append "
        f"and were appended now, after repairing {report.repaired:,} users"
    )


def _relay(args: argparse.Namespace, settings: Settings, _: LocalServerSettings) -> None:
    asyncio.run(_relay_outbox(settings, args.grace))


async def _finish_jobs(settings: Settings) -> None:
    """Finish the fan-outs and erasures a stopped service left, showing progress (under the
    workers' leases: a job a running worker holds is left to it)."""
    async with open_services(settings, jobs=True) as services:
        jobs = services.jobs
        pending = await services.neo4j.moderation.pending_work()
        _print(f"{len(pending)} unfinished job(s)")
        worker = services.worker
        with tqdm(desc="jobs", unit="job") as bar:
            while await worker.take_moderation_jobs() or jobs.running():
                await asyncio.sleep(0.5)
                bar.update(
                    len(pending) - len(await services.neo4j.moderation.pending_work()) - bar.n
                )
        left = await services.neo4j.moderation.pending_work()
        _print(f"done; {len(left)} job(s) still pending (held by a worker)" if left else "done")


def _jobs(_: argparse.Namespace, settings: Settings, __: LocalServerSettings) -> None:
    asyncio.run(_finish_jobs(settings))


# -- evaluation ---------------------------------------------------------------------------------


def eval_settings(
    settings: Settings, local: LocalServerSettings
) -> tuple[Settings, LocalServerSettings]:
    """The evaluation's own servers: wiped at every run, so never the dev or bench data."""
    servers = settings.model_copy(
        update={"neo4j_uri": local.eval_neo4j_uri, "redis_url": local.eval_redis_url}
    )
    own = local.model_copy(
        update={"state_dir": local.state_dir / "eval", "neo4j_heap": "2g", "neo4j_pagecache": "1g"}
    )
    return servers, own


EVAL_TRAIN_USERS = 1_000  # the trainer's sample of each training graph (not --users)


async def _evaluate(settings: Settings, data: Dataset, args: argparse.Namespace) -> Summary:
    async def trained(services: Services, _: Split) -> str:
        """Fit the ranker on the training graph just loaded (its newest edges held out) and
        serve it: the evaluation's held-out edges are never seen by the trainer."""
        report = await train(services, seed=1, users=EVAL_TRAIN_USERS, progress=False, say=_print)
        await services.suggestions.ranker.refresh()
        return "ranker: " + "\n  ".join(report.lines())

    async with open_services(settings, jobs=True) as services:
        return await evaluate_seeds(
            services,
            data,
            seeds=args.seeds,
            users=args.users,
            progress=not args.no_progress,
            say=_print,
            after_load=trained if args.ranker == "trained" else None,
        )


def _eval_pymk(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> None:
    """Run the evaluation on its own servers (wiped per seed), print the table, and write
    the JSON if asked; a JSON path that cannot be written is refused before the long run."""
    if args.json is not None and not os.access(args.json.parent, os.W_OK):
        raise SystemExit(f"graphsvc eval-pymk: cannot write {args.json} (no such directory?)")
    data = read_dataset(args.edges, undirected=args.undirected, interactions=args.interactions)
    servers, own = eval_settings(settings, local)
    local_servers.up(servers, own, _print)
    summary = asyncio.run(_evaluate(servers, data, args))
    for line in table(summary):
        _print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(summary.as_json(), indent=2, allow_nan=False) + "\n")
        _print(f"wrote {args.json}")


def _seed_list(text: str) -> list[int]:
    """``--seeds 1,2,3``: distinct integers (a repeated seed would understate the spread)."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated integers: {text!r}") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"expected distinct integers: {text!r}")
    return seeds


def _positive(text: str) -> int:
    """A count of users: a whole number above zero (zero users would score nothing)."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer: {text!r}")
    return int(text)


def _one_seed(text: str) -> list[int]:
    """``--seed S``, kept for old command lines: the one-seed list."""
    try:
        return [int(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


async def _train_once(settings: Settings, args: argparse.Namespace) -> None:
    async with open_services(settings, jobs=True) as services:
        report = await train(
            services,
            holdout=args.holdout,
            share=args.share,
            seed=args.seed,
            users=args.users,
            store=not args.dry_run,
            progress=not args.no_progress,
            say=_print,
        )
    for line in report.lines():
        _print(line)


def _train_pymk(args: argparse.Namespace, settings: Settings, _: LocalServerSettings) -> None:
    """Train once, or every ``--every`` seconds (a failed round is reported and retried at the
    next one: the served model stays the last good one)."""
    while True:
        try:
            asyncio.run(_train_once(settings, args))
        except TrainError as exc:
            if args.every is None:
                raise
            _print(f"graphsvc train-pymk: {exc}")
        if args.every is None:
            return
        time.sleep(args.every)


def _keys(args: argparse.Namespace, settings: Settings, local: LocalServerSettings) -> None:
    if args.action == "create":
        scopes = parse_scopes(args.scopes)
        new = asyncio.run(keys.create(settings, scopes, args.user, args.name or ""))
        _print(f"key id: {new.key.id}")
        _print(f"key (shown once, keep it): {new.token}")
    elif args.action == "list":
        for line in keys.lines(asyncio.run(keys.listing(settings))):
            _print(line)
    elif args.action == "revoke":
        key_id = key_id_of(args.id)
        if key_id is not None:  # a whole key: named by its id, never echoed
            raise InvalidKeyRequest(f"keys revoke takes a key's id, not the key (its id: {key_id})")
        changed = asyncio.run(keys.revoke(settings, args.id))
        _print(f"revoked {args.id}" if changed else f"{args.id} was already revoked")
    else:  # local: the admin key of a local `make run`
        path = local.state_dir / "admin-key"
        token, created = asyncio.run(keys.local_admin(settings, keys.saved_key(path)))
        if created:
            keys.save_key(path, token)
        if created:  # shown once; afterwards, where it is
            _print(f"local admin key (created; saved in {path}, shown once): {token}")
        else:
            _print(f"local admin key: the one in {path} (KEY=$(cat {path}))")


COMMANDS: dict[str, Command] = {
    "keys": _keys,
    "train-pymk": _train_pymk,
    "serve": _serve,
    "worker": _worker,
    "services": _services,
    "load": _load,
    "gen": _gen,
    "demo": _demo,
    "jobs": _jobs,
    "eval-pymk": _eval_pymk,
    "reconcile": _reconcile,
    "relay": _relay,
    "check": _check,
    "rebuild": _rebuild,
}


def _add_reconcile_parser(sub: argparse._SubParsersAction) -> None:
    rec = sub.add_parser("reconcile", help="find and repair drift between the mirror and Neo4j")
    rec.add_argument("users", nargs="*", help="user ids")
    rec.add_argument("--all", action="store_true", help="every user in Neo4j")
    rec.add_argument(
        "--every", type=float, metavar="SECONDS", help="repeat over recently written users"
    )
    rec.add_argument(
        "--timelines",
        action="store_true",
        help="also check each user's timeline inbox against the rules, and repair it",
    )


def _add_eval_parser(sub: argparse._SubParsersAction) -> None:
    """`eval-pymk`'s options, apart: `--seed S` (one seed) still works beside `--seeds`."""
    ev = sub.add_parser(
        "eval-pymk", help="score suggestions against link-prediction baselines on a graph"
    )
    ev.add_argument("--edges", type=Path, required=True, help="edge list: src dst [unix_ts]")
    ev.add_argument("--interactions", type=Path, help="src dst unix_ts per interaction")
    direction = ev.add_mutually_exclusive_group()
    direction.add_argument("--directed", dest="undirected", action="store_false")
    direction.add_argument("--undirected", dest="undirected", action="store_true")
    ev.add_argument(
        "--users",
        type=_positive,
        default=DEFAULT_USERS,
        help=f"users sampled per seed (default {DEFAULT_USERS:,}, or all with held-out pairs)",
    )
    seeds = ev.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds",
        type=_seed_list,
        metavar="S,S,...",
        help="seeds, each a fresh split, load and sample (default "
        + ",".join(map(str, DEFAULT_SEEDS))
        + ")",
    )
    seeds.add_argument("--seed", dest="seeds", type=_one_seed, metavar="S", help="one seed")
    ev.set_defaults(seeds=list(DEFAULT_SEEDS))
    ev.add_argument("--json", type=Path, metavar="PATH", help="write per-seed and summary results")
    ev.add_argument(
        "--ranker",
        choices=("trained", "default"),
        default="trained",
        help="train-pymk on each training graph first (default), or the built-in weights",
    )
    ev.add_argument("--no-progress", action="store_true")


def _add_keys_parser(sub: argparse._SubParsersAction) -> None:
    ks = sub.add_parser("keys", help="create, list and revoke API keys")
    actions = ks.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a key (shown once)")
    create.add_argument(
        "--scopes", required=True, help="comma-separated: read,write,admin,internal"
    )
    create.add_argument("--user", help="bind the key to this acting user")
    create.add_argument("--name", help="what the key is for")
    actions.add_parser("list", help="every key (never the keys themselves)")
    revoke = actions.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("id")
    actions.add_parser("local", help="the local admin key of `make run` (created if needed)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphsvc", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the HTTP API (uvicorn or granian)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)
    serve.add_argument("--server", choices=["uvicorn", "granian"], help="default: API_SERVER")

    sub.add_parser("worker", help="run the background work (relay, fan-outs, jobs) beside `serve`")
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

    tr = sub.add_parser("train-pymk", help="fit the suggestion ranker on the served graph")
    tr.add_argument(
        "--holdout",
        choices=("newest", "random"),
        default="newest",
        help="hold out the newest edges (default) or a seeded random share",
    )
    tr.add_argument("--share", type=float, default=0.1, help="share held out (default 0.1)")
    tr.add_argument("--seed", type=int, default=1)
    tr.add_argument("--users", type=_positive, default=2_000, help="users sampled (default 2,000)")
    tr.add_argument("--every", type=float, metavar="SECONDS", help="retrain forever, this often")
    tr.add_argument("--dry-run", action="store_true", help="report, but store no model")
    tr.add_argument("--no-progress", action="store_true")

    _add_eval_parser(sub)
    _add_keys_parser(sub)

    _add_reconcile_parser(sub)

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
    try:
        return COMMANDS[args.command](args, get_settings(), get_local_server_settings()) or 0
    except (LoadError, local_servers.ServerError, TrainError, GraphError) as exc:
        print(f"graphsvc: {exc}", file=sys.stderr)
        return 2
    except (Neo4jError, DriverError, RedisError) as exc:
        print(f"graphsvc {args.command}: {store_failure(exc)}", file=sys.stderr)
        return 2
    except ValidationError as exc:  # a setting from the environment
        print(f"graphsvc: {bad_setting(exc)}", file=sys.stderr)
        return 2


def bad_setting(exc: ValidationError) -> str:
    """One line naming the environment variable and what is wrong with its value (the value
    itself only when it is one setting's and no secret)."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    if not field:
        return f"settings: {error['msg']}"
    if field in SECRET_SETTINGS:
        return f"setting {field.upper()}: {error['msg']}"
    return f"setting {field.upper()}={error.get('input')!r}: {error['msg']}"


def store_failure(exc: Exception) -> str:
    """One line naming the store and its reason (Neo4j's error code, when it sent one)."""
    if isinstance(exc, RedisError):
        return f"redis: {type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(exc, Neo4jError):
        message = " ".join((exc.message or "").split())
        return f"neo4j: {exc.code}: {message}"
    return f"neo4j: {type(exc).__name__}: {' '.join(str(exc).split())}"


if __name__ == "__main__":
    sys.exit(main())
