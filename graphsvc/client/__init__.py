"""``graphsvc.client``: graphsvc over HTTP for services and notebooks.

``GraphClient`` (blocking) and ``AsyncGraphClient`` have the same methods, return the
server's own response models (``graphsvc.wire.schemas``), walk paged lists for you, retry what
can be retried (see ``_core``) and raise ``GraphError`` subclasses for error answers.
Every method is typed with what it answers (``FollowBody``, ``Listing[PageBody]`` whose items
are ``Item``, ...), so a type checker follows a call's answer as far as the caller uses it.

    from graphsvc.client import GraphClient

    with GraphClient("http://127.0.0.1:8000", api_key="gsk_...") as graph:
        graph.follow("alice", "ada")
        for item in graph.followers("ada", progress=True):
            print(item.user_id, item.since)
"""

from __future__ import annotations

from graphsvc.client._async.client import AsyncGraphClient
from graphsvc.client._async.listing import AsyncListing
from graphsvc.client._core import NewFollower, Notification
from graphsvc.client._sync.client import GraphClient
from graphsvc.client._sync.listing import Listing
from graphsvc.client._walk import Page
from graphsvc.client.errors import (
    BadRequest,
    Conflict,
    ErrorCode,
    Forbidden,
    GraphError,
    InvalidResponse,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from graphsvc.client.snapshot import Snapshot, load_snapshot

__all__ = [
    "AsyncGraphClient",
    "AsyncListing",
    "BadRequest",
    "Conflict",
    "ErrorCode",
    "Forbidden",
    "GraphClient",
    "GraphError",
    "InvalidResponse",
    "Listing",
    "NewFollower",
    "NotFound",
    "Notification",
    "Page",
    "RateLimited",
    "Snapshot",
    "Unauthorized",
    "Unavailable",
    "load_snapshot",
]
