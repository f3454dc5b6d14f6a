"""graphsvc: follow-graph relations and recommendations.

Neo4j holds the follow edges (the truth); Redis mirrors hot lists and exact counts. The
package is layered as folders: ``api`` -> ``services`` -> ``adapters`` -> ``domain``, with
``bootstrap`` wiring them and ``ops`` for the tooling (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphsvc.version import __version__

__all__ = ["__version__", "create_app"]

if TYPE_CHECKING:
    from graphsvc.api.app import create_app


def __getattr__(name: str) -> Any:
    # ``graphsvc.create_app`` is loaded on first use, so importing a small part of the package
    # (the domain values, the ops tooling) does not import FastAPI and both stores' drivers.
    if name == "create_app":
        from graphsvc.api.app import create_app

        return create_app
    raise AttributeError(f"module 'graphsvc' has no attribute {name!r}")
