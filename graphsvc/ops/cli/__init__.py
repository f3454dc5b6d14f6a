"""The ``graphsvc`` command line, on Typer: one module per group of commands.

- ``serving``: ``serve`` and ``worker``, the processes of a deployment;
- ``services``: ``services up|down|status``, the local Neo4j and Redis;
- ``data``: ``load``, ``gen``, ``demo`` and ``export``, the graph in and out;
- ``repair``: ``check``, ``rebuild``, ``reconcile``, ``relay`` and ``jobs``, the checks of the
  mirror against the graph and their repairs;
- ``ranker`` (a package): the group ``ranker train|eval|status|promote|split|report``;
- ``keys``: ``keys create|list|revoke|local``.

Async commands are written once, as async functions (``running.command`` runs them). A
failure the operator must act on ends in one line on stderr naming the cause, never a
traceback (``failures``). ``reference`` renders every command's help for the docs.
"""

from graphsvc.ops.cli.root import app, main

__all__ = ["app", "main"]
