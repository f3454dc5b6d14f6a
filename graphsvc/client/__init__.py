"""``graphsvc.client``: graphsvc over HTTP for services and notebooks.

``GraphClient`` (blocking) and ``AsyncGraphClient`` have the same methods, return the
server's own response models (``graphsvc.schemas``), walk paged lists for you, retry what
can be retried (see ``_core``) and raise ``GraphError`` subclasses for error answers.

    from graphsvc.client import GraphClient

    with GraphClient("http://127.0.0.1:8000", api_key="gsk_...") as graph:
        graph.follow("alice", "ada")
        for item in graph.followers("ada", progress=True):
            print(item.user_id, item.since)
"""

from __future__ import annotations

from graphsvc.client.aio import AsyncGraphClient
from graphsvc.client.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    GraphError,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from graphsvc.client.sync import GraphClient

__all__ = [
    "AsyncGraphClient",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "GraphClient",
    "GraphError",
    "NotFound",
    "RateLimited",
    "Unauthorized",
    "Unavailable",
]
