"""``serve`` and ``worker``: the two processes of a deployment, the API and its background
work, started apart so each scales and restarts on its own."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from functools import partial
from typing import Annotated, Literal

import typer

from graphsvc.ops.cli.running import command, say

app = typer.Typer()


@command(app)
def serve(
    host: Annotated[
        str | None,
        typer.Option(
            metavar="TEXT", envvar="API_HOST", show_default="127.0.0.1", help="address to listen on"
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            metavar="INTEGER", envvar="API_PORT", show_default="8000", help="port to listen on"
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            metavar="INTEGER", envvar="API_WORKERS", show_default="1", min=1, help="API processes"
        ),
    ] = None,
    server: Annotated[
        Literal["uvicorn", "granian"] | None,
        typer.Option(
            metavar="[uvicorn|granian]",
            envvar="API_SERVER",
            show_default="uvicorn",
            help="HTTP server",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API (uvicorn or granian).

    Each option's default is its setting's (the environment variable beside it).
    """
    from graphsvc.ops.servers import http_server
    from graphsvc.settings import (
        get_local_server_settings,
        get_settings,
        refuse_development_secrets,
    )

    settings, local = get_settings(), get_local_server_settings()
    refuse_development_secrets(settings)
    workers = workers or settings.api.api_workers
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # /metrics sums every worker's values from files in this directory (a fresh one: the
        # files of a previous run would be counted again)
        shared = local.state_dir / "metrics" / str(os.getpid())
        shutil.rmtree(shared, ignore_errors=True)
        shared.mkdir(parents=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    http_server.run(
        http_server.Serving(
            server=server or settings.api.api_server,
            host=host or settings.api.api_host,
            port=port or settings.api.api_port,
            workers=workers,
            access_log=settings.api.api_access_log,
        )
    )


@command(app)
async def worker() -> None:
    """Run the background work beside `serve`.

    The relay, fan-outs and jobs. It runs until SIGINT or SIGTERM; the records of its jobs let another worker resume them.
    """
    from graphsvc.bootstrap import open_working
    from graphsvc.ops.repair.reconcile import reconcile_rounds
    from graphsvc.settings import get_settings

    settings = get_settings()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, main.cancel)
    async with open_working(settings) as working:
        say(f"graphsvc worker: running (at most {settings.worker.worker_jobs} jobs at once)")
        every = settings.worker.worker_reconcile_seconds
        beside = (
            {}
            if every is None
            else {"reconcile": partial(reconcile_rounds, working.consistency, every, say=say)}
        )
        try:
            await working.background.worker.run(beside)
        except asyncio.CancelledError:
            if not main.cancelling():  # no signal asked: the worker must not end quietly
                raise
            say("graphsvc worker: stopping")
