"""The one place where a failure of a command becomes one line on stderr and an exit code.

An operator acts on the cause (a bad edge file, a setting, a store that refuses or cannot be
reached), so a traceback would only hide it. Exit codes: 2 for a failure, 1 for a command
refused as asked (``Refused``); a command may end with another (``check`` finding drift).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from pydantic import ValidationError


class Refused(Exception):
    """A command given arguments it cannot act on (that Click's parsing cannot tell)."""


def bad_setting(exc: ValidationError) -> str:
    """One line naming the environment variable and what is wrong with its value (the value
    itself only when it is one setting's and no secret)."""
    from graphsvc.settings import SECRET_SETTINGS

    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    if not field:
        return f"settings: {error['msg']}"
    if field in SECRET_SETTINGS:
        return f"setting {field.upper()}: {error['msg']}"
    return f"setting {field.upper()}={error.get('input')!r}: {error['msg']}"


def one_line(exc: Exception, command: str | None) -> tuple[str, int] | None:
    """The line and exit code of a failure an operator acts on; None for a bug (which keeps
    its traceback). The kinds are imported here, when a command failed: a command's help
    loads none of the stores' drivers."""
    from pydantic import ValidationError

    from graphsvc.adapters.failures import store_failure
    from graphsvc.domain.errors import GraphError
    from graphsvc.domain.ranker.registry import TrainError
    from graphsvc.ops.data.edge_files import LoadError
    from graphsvc.ops.ranker.registry import RegistryRefused
    from graphsvc.ops.servers.local_servers import ServerError
    from graphsvc.ops.servers.processes import ProcessFailed
    from graphsvc.settings import DevelopmentSecrets

    named = f"graphsvc {command}" if command else "graphsvc"
    if isinstance(exc, Refused | RegistryRefused):
        return f"{named}: {exc}", 1
    if isinstance(exc, DevelopmentSecrets):
        return f"{named}: {exc}", 2
    if (store := store_failure(exc)) is not None:
        return f"{named}: {store}", 2
    if isinstance(exc, ValidationError):  # a setting from the environment
        return f"graphsvc: {bad_setting(exc)}", 2
    if isinstance(exc, LoadError | ServerError | ProcessFailed | TrainError | GraphError):
        return f"graphsvc: {exc}", 2
    return None


class Commands(TyperGroup):
    """The root group: a failure inside any command ends here, as ``one_line`` says."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # Click's own ends (a help shown, a usage error): nothing to explain
        except Exception as exc:
            said = one_line(exc, ctx.invoked_subcommand)
            if said is None:
                raise
            typer.echo(said[0], err=True)
            raise typer.Exit(said[1]) from None
