"""``ranker train`` and ``ranker eval``: the suggestion ranker trained on the served graph now (the
worker's training cycle, asked for), and the service as served scored against link-prediction
baselines on graphs of the evaluation's own servers. They join the group of ``models``
(status, promote, split, report): one group, ``graphsvc ranker``, for the whole feature."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from graphsvc.ops.cli.failures import Refused
from graphsvc.ops.cli.ranker.models import app
from graphsvc.ops.cli.running import command, say
from graphsvc.ops.evaluation.defaults import DEFAULT_SEEDS, DEFAULT_USERS

if TYPE_CHECKING:
    from graphsvc.bootstrap import Services
    from graphsvc.ops.evaluation.offline import Dataset, FirstGraph, Split, Summary
    from graphsvc.settings import LocalServerSettings, Settings


NoProgress = Annotated[bool, typer.Option("--no-progress", help="no progress bars")]
Ranker = Annotated[
    Literal["trained", "default"],
    typer.Option(
        metavar="[trained|default]",
        help="the worker's training cycle on each training graph, or built-in weights",
    ),
]
First = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        metavar="PATH",
        help="an edge list loaded whole (and trained on) before the evaluated graph, in the "
        "same database: the service is scored as loaded, and again once retrained",
    ),
]
FirstUndirected = Annotated[
    bool,
    typer.Option(
        "--first-undirected/--first-directed",
        help="whether the --first graph's lines follow both ways",
    ),
]


def _seeds(seeds: str | None, seed: int | None) -> list[int]:
    """``--seeds 1,2,3`` (distinct integers: a repeated seed would understate the spread),
    or ``--seed S`` for one, or the default seeds."""

    if seeds is not None and seed is not None:
        raise typer.BadParameter("give --seed or --seeds, not both", param_hint="'--seed'")
    if seed is not None:
        return [seed]
    if seeds is None:
        return list(DEFAULT_SEEDS)
    try:
        chosen = [int(part) for part in seeds.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"not comma-separated integers: {seeds!r}", param_hint="'--seeds'"
        ) from None
    if not chosen or len(set(chosen)) != len(chosen):
        raise typer.BadParameter(f"expected distinct integers: {seeds!r}", param_hint="'--seeds'")
    return chosen


@command(app, "train")
async def train_ranker(
    holdout: Annotated[
        Literal["auto", "newest", "random"],
        typer.Option(
            metavar="[auto|newest|random]",
            help="hold out the newest edges, a seeded random share, or choose by the graph's "
            "times (auto)",
        ),
    ] = "auto",
    share: Annotated[float, typer.Option(metavar="FLOAT", help="share held out")] = 0.1,
    seed: Annotated[
        int,
        typer.Option(
            metavar="INTEGER",
        ),
    ] = 1,
    users: Annotated[
        int | None,
        typer.Option(metavar="INTEGER", min=10, help="users sampled (default RANKER_TRAIN_USERS)"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="promote it whatever the validation says")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="report, but store no model")] = False,
    no_progress: NoProgress = False,
) -> None:
    """Train the suggestion ranker on the served graph now, as the worker does.

    The model is validated against the served one and the heuristics and promoted only when
    better (--force: promoted anyway); a rejected one is stored with the reason.
    """
    from tqdm import tqdm

    from graphsvc.bootstrap import open_operations
    from graphsvc.settings import get_settings

    async with open_operations(get_settings()) as operations:
        with tqdm(desc="features", unit="user", disable=no_progress) as bar:
            report = await operations.background.ranker_training.train(
                "asked (graphsvc ranker train)",
                holdout=holdout,
                share=share,
                seed=seed,
                users=users,
                store=not dry_run,
                force=force,
                progress=bar.update,
            )
    for line in report.lines():
        say(line)


def eval_settings(
    settings: Settings, local: LocalServerSettings
) -> tuple[Settings, LocalServerSettings]:
    """The evaluation's own servers: wiped at every run, so never the dev or bench data."""
    servers = settings.with_values(neo4j_uri=local.eval_neo4j_uri, redis_url=local.eval_redis_url)
    own = local.model_copy(
        update={"state_dir": local.state_dir / "eval", "neo4j_heap": "2g", "neo4j_pagecache": "1g"}
    )
    return servers, own


def _read(
    edges: Path, undirected: bool, interactions: Path | None, first: Path | None, both: bool
) -> tuple[Dataset, FirstGraph | None]:
    """The evaluated graph, and the first one (``both``: undirected) refused when its
    prefixed ids meet the evaluated graph's."""
    from graphsvc.ops.evaluation.offline import read_dataset, read_first, shared_ids

    data = read_dataset(edges, undirected=undirected, interactions=interactions)
    if first is None:
        return data, None
    graph = read_first(first, undirected=both)
    if shared := shared_ids(graph, data):
        raise Refused(f"{edges} has ids of the --first graph's prefix: {', '.join(shared[:3])}")
    return data, graph


async def _evaluate(
    settings: Settings,
    data: tuple[Dataset, FirstGraph | None],
    seeds: list[int],
    users: int,
    progress: bool,
    ranker: str,
) -> Summary:
    from graphsvc.bootstrap import open_services
    from graphsvc.domain.ranker.registry import TrainError
    from graphsvc.ops.evaluation.offline import evaluate_seeds

    async def trained(services: Services, _: Split) -> str:
        """The worker's training cycle on the training graph just loaded (its own holdout,
        so the evaluation's held-out edges are never seen), then the ranker served as it
        would be: the promoted model, or the built-in default when the cycle rejected it."""

        try:
            report = await services.background.ranker_training.train("evaluation", progress=None)
            lines = report.lines()
        except TrainError as exc:
            lines = [f"training failed: {exc}"]
        served = await services.suggestions.ranker.refresh()
        lines.append(f"serving v{served.version}" if served.version else "serving the default")
        return "ranker: " + "\n  ".join(lines)

    async with open_services(settings, jobs=True) as services:
        return await evaluate_seeds(
            services,
            data[0],
            first=data[1],
            seeds=seeds,
            users=users,
            progress=progress,
            say=say,
            after_load=trained if ranker == "trained" else None,
        )


EdgeFile = Annotated[
    Path,
    typer.Option(metavar="PATH", exists=True, dir_okay=False, help="edge list: src dst [unix_ts]"),
]
InteractionFile = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH", exists=True, dir_okay=False, help="src dst unix_ts per interaction"
    ),
]


Undirected = Annotated[
    bool, typer.Option("--undirected/--directed", help="whether each line follows both ways")
]
Users = Annotated[
    int,
    typer.Option(
        metavar="INTEGER",
        min=1,
        help="users sampled per seed (or all with held-out follows, when fewer)",
    ),
]
Seeds = Annotated[
    str | None,
    typer.Option(
        metavar="S,S,...",
        show_default=False,
        help="seeds, each a fresh split, load and sample (default "
        + ",".join(map(str, DEFAULT_SEEDS))
        + ")",
    ),
]
Seed = Annotated[int | None, typer.Option(metavar="S", help="one seed")]
JsonPath = Annotated[
    Path | None,
    typer.Option("--json", metavar="PATH", help="write per-seed and summary results"),
]
Url = Annotated[
    str | None,
    typer.Option(metavar="URL", help="the API (default GRAPHSVC_URL, else the local one)"),
]
WaitMinutes = Annotated[
    float,
    typer.Option(
        metavar="MINUTES",
        min=0.1,
        help="how long to wait for the worker's training, and for the API to serve it",
    ),
]
Wipe = Annotated[
    bool,
    typer.Option(
        "--wipe",
        help="delete everything in the service's stores before each seed (else the graph "
        "must be empty)",
    ),
]


@command(app, "eval")
async def eval_ranker(
    edges: EdgeFile,
    interactions: InteractionFile = None,
    undirected: Undirected = True,
    users: Users = DEFAULT_USERS,
    seeds: Seeds = None,
    seed: Seed = None,
    json_path: JsonPath = None,
    ranker: Ranker = "trained",
    first: First = None,
    first_undirected: FirstUndirected = False,
    no_progress: NoProgress = False,
) -> None:
    """Score suggestions against link-prediction baselines.

    It runs on its own servers (wiped per seed), prints the table, and writes the JSON if
    asked; a JSON path that cannot be written is refused before the long run. With --first,
    that graph is loaded and trained on before each seed's training graph (a second
    community imported beside one), and the service is also scored as loaded.
    """
    chosen = _seeds(seeds, seed)
    _writable(json_path)
    data = _read(edges, undirected, interactions, first, first_undirected)
    servers = await _eval_servers()
    summary = await _evaluate(servers, data, chosen, users, not no_progress, ranker)
    await _report(summary, json_path)


def _writable(json_path: Path | None) -> None:
    """A JSON path that cannot be written is refused before the long run."""
    if json_path is not None and not os.access(json_path.parent, os.W_OK):
        raise Refused(f"cannot write {json_path} (no such directory?)")


async def _report(summary: Summary, json_path: Path | None) -> None:
    """The table, and the JSON if asked."""
    from graphsvc.ops.evaluation.offline import table

    for line in table(summary):
        say(line)
    if json_path is not None:
        text = json.dumps(summary.as_json(), indent=2, allow_nan=False) + "\n"
        await asyncio.to_thread(json_path.write_text, text)
        say(f"wrote {json_path}")


async def _eval_servers() -> Settings:
    """The evaluation's own servers, up (never the ones `make run` or the suite use)."""
    from graphsvc.ops.servers import local_servers
    from graphsvc.settings import get_local_server_settings, get_settings

    servers, own = eval_settings(get_settings(), get_local_server_settings())
    await asyncio.to_thread(local_servers.up, servers, own, say)
    return servers


@command(app, "served")
async def served_ranker(
    edges: EdgeFile,
    interactions: InteractionFile = None,
    undirected: Undirected = False,
    users: Users = DEFAULT_USERS,
    seeds: Seeds = None,
    seed: Seed = None,
    url: Url = None,
    wait_minutes: WaitMinutes = 30.0,
    wipe: Wipe = False,
    json_path: JsonPath = None,
    no_progress: NoProgress = False,
) -> None:
    """Judge the suggestions a running service serves, as its users get them.

    Per seed: hold out 10% of the follows (the newest where the file has times), load the
    rest as `graphsvc load` does into the service's stores (from the environment's
    settings), wait for its `graphsvc worker` to train and its API to serve the result, ask
    the API for ten suggestions for each sampled user, and score them against the exact
    heuristics on the same training graph. Prints the table with the spread over seeds.
    """
    from graphsvc.ops.evaluation.offline import read_dataset
    from graphsvc.ops.evaluation.served import ServedEvaluationError, Target, served_seeds
    from graphsvc.settings import get_settings

    chosen = _seeds(seeds, seed)
    _writable(json_path)
    data = read_dataset(edges, undirected=undirected, interactions=interactions)
    target = Target(url or "", get_settings(), wait_minutes * 60, wipe)
    try:
        summary = await served_seeds(target, data, chosen, users, not no_progress, say)
    except ServedEvaluationError as exc:
        raise Refused(str(exc)) from None
    await _report(summary, json_path)
