"""How a command runs: the settings checked first, a coroutine function run on its own event
loop. Commands that talk to the stores are written once, as async functions; this is the one
place that turns them into what Click calls."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import typer

Function = TypeVar("Function", bound=Callable[..., Any])


def say(line: str) -> None:
    """A line of the command's report, on stdout at once (a log reader tails it live)."""
    print(line, flush=True)


def command(group: typer.Typer, name: str | None = None) -> Callable[[Function], Function]:
    """Register a function as a command of ``group``, its docstring as its help.

    Every command reads the settings before it starts, so a bad value in the environment
    fails each one the same way, before any work (``--help`` still answers: it is read
    while the arguments are parsed, before this runs).
    """

    def register(function: Function) -> Function:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> None:
            from graphsvc.settings import get_local_server_settings, get_settings

            get_settings()
            get_local_server_settings()
            result = function(*args, **kwargs)
            if inspect.iscoroutine(result):
                asyncio.run(result)

        group.command(name)(run)
        return function

    return register
