"""``GraphClient``: the blocking client (scripts, notebooks)."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

import httpx

from graphsvc.client._core import Call, ClientConfig, answer, wait_or_raise
from graphsvc.client._routes import Routes
from graphsvc.client.errors import GraphError
from graphsvc.client.listing import Listing


class GraphClient(Routes):
    """graphsvc over HTTP. ``base_url`` defaults to GRAPHSVC_URL, ``api_key`` to
    GRAPHSVC_API_KEY; connections are pooled; use it as a context manager or ``close()``."""

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, **options: Any
    ) -> None:
        self.config = ClientConfig.resolve(base_url, api_key, **options)
        self._http = httpx.Client(
            base_url=self.config.base_url, headers=self.config.headers(),
            timeout=self.config.timeout,
        )  # fmt: skip

    def _call(self, call: Call) -> Any:
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    call.method, call.path, params=call.params or None, json=call.body
                )
                return answer(call, response)
            except (GraphError, httpx.TransportError) as exc:
                wait = wait_or_raise(call, exc, attempt, self.config)
            time.sleep(wait)
            attempt += 1

    def _list(self, call: Call, limit: int | None, progress: bool) -> Listing:
        return Listing(self._call, call, limit, progress)

    # -- for data scientists (see analysis.py) ----------------------------------------------

    def counts_many(self, user_ids: Any) -> dict[str, Any]:
        from graphsvc.client import analysis

        return analysis.counts_many(self, user_ids)

    def relationships_many(self, viewer: str, user_ids: Any) -> dict[str, Any]:
        from graphsvc.client import analysis

        return analysis.relationships_many(self, viewer, list(user_ids))

    def ego_graph(self, user: str, *, radius: int = 1, max_nodes: int = 500) -> Any:
        from graphsvc.client import analysis

        return analysis.ego_graph(self, user, radius=radius, max_nodes=max_nodes)

    def subgraph(self, users: Any) -> Any:
        from graphsvc.client import analysis

        return analysis.subgraph(self, list(users))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GraphClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
