"""What a request carries to its route: the services the app serves with, the key that was
checked, and who reads."""

from __future__ import annotations

from fastapi import Request

from graphsvc.api.http.access import VIEWER
from graphsvc.bootstrap import Serving
from graphsvc.domain.access import ApiKey
from graphsvc.domain.privacy import Viewer


def services_of(request: Request) -> Serving:
    """The services the app serves with (opened by its lifespan, or given to ``create_app``).

    A plain call rather than a FastAPI dependency: dependency injection cost a noticeable
    share of a read's CPU, for nothing a route needs (docs/performance.md, "Where a request's
    CPU goes")."""
    return request.app.state.services


def api_key_of(request: Request) -> ApiKey:
    """The key that was checked for this request (set by ``access.admit``)."""
    return request.scope["state"]["api_key"]


def viewer_of(request: Request) -> Viewer:
    """Who reads (``domain.privacy.Viewer``), as ``access.admit`` found it from the key and
    the ``X-Graph-Viewer`` header."""
    return request.scope["state"][VIEWER]
