"""The HTTP server `graphsvc serve` runs the app under: uvicorn or granian, chosen by
API_SERVER (or ``--server``), each with its fastest event loop and parser.

Both serve the same ASGI app with the same lifespan (the services open once per worker
process). uvicorn parses HTTP in Python's process with httptools and runs on uvloop; granian
parses and writes HTTP in Rust threads beside the Python one, which leaves the interpreter
more of its core for the routes (docs/performance.md, "Where a request's CPU goes").
"""

from __future__ import annotations

from dataclasses import dataclass

APP = "graphsvc.api.app:create_app"  # a factory: each worker builds its app from settings


@dataclass(frozen=True)
class Serving:
    """Where and how to serve: the server, its address and worker processes."""

    server: str
    host: str
    port: int
    workers: int
    access_log: bool
    app: str = APP  # the factory served ("module:function")


def run(serving: Serving) -> None:
    """Serve until stopped (SIGINT or SIGTERM), under the chosen server."""
    if serving.server == "granian":
        _granian(serving)
    else:
        _uvicorn(serving)


def _uvicorn(serving: Serving) -> None:
    import uvicorn

    uvicorn.run(
        serving.app,
        factory=True,
        host=serving.host,
        port=serving.port,
        workers=serving.workers,
        loop="uvloop",  # named, not "auto": a missing extra fails here rather than run slowly
        http="httptools",
        log_level="info",
        access_log=serving.access_log,
    )


def _granian(serving: Serving) -> None:
    try:
        from granian import Granian
        from granian.constants import Interfaces, Loops
    except ImportError:
        raise SystemExit("graphsvc serve: API_SERVER=granian needs granian installed") from None
    Granian(
        serving.app,
        factory=True,
        address=serving.host,
        port=serving.port,
        interface=Interfaces.ASGI,
        workers=serving.workers,
        loop=Loops.uvloop,
        log_access=serving.access_log,
    ).serve()
