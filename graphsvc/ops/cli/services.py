"""``services up|down|status``: the local Neo4j and Redis a development machine runs without
Docker (``graphsvc.ops.servers.local_servers``)."""

from __future__ import annotations

from typing import Annotated

import typer

from graphsvc.ops.cli.running import command, say

app = typer.Typer(help="Run the local Neo4j and Redis servers.", no_args_is_help=True)


@command(app)
def up() -> None:
    """Start the local Neo4j and Redis.

    Running ones are left alone; with REDIS_CLUSTER=1, Redis is a cluster of three.
    """
    from graphsvc.ops.servers import local_servers
    from graphsvc.settings import get_local_server_settings, get_settings

    local_servers.up(get_settings(), get_local_server_settings())


@command(app)
def down(
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="every server whose state is under STATE_DIR, the evaluation's included",
        ),
    ] = False,
) -> None:
    """Stop the local servers this project started (those NEO4J_URI and REDIS_URL name).

    --all: every local server whose pid file is under STATE_DIR, whatever its port: the
    throwaway servers of `graphsvc ranker eval` and a cluster's nodes too.
    """
    from graphsvc.ops.servers import local_servers
    from graphsvc.settings import get_local_server_settings, get_settings

    if every:
        local_servers.down_all(get_local_server_settings())
    else:
        local_servers.down(get_settings(), get_local_server_settings())


@command(app)
def status() -> None:
    """Say whether each local server answers, and its pid."""
    from graphsvc.ops.servers import local_servers
    from graphsvc.settings import get_local_server_settings, get_settings

    for line in local_servers.status(get_settings(), get_local_server_settings()):
        say(line)
