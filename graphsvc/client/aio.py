"""``AsyncGraphClient``: the same methods as ``GraphClient``, awaited (services)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import httpx

from graphsvc.client._core import Call, ClientConfig, answer, wait_or_raise
from graphsvc.client._routes import Routes, _u
from graphsvc.client.errors import GraphError, error_for
from graphsvc.client.listing import AsyncListing

log = logging.getLogger(__name__)


class AsyncGraphClient(Routes):
    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, **options: Any
    ) -> None:
        self.config = ClientConfig.resolve(base_url, api_key, **options)
        self._http = httpx.AsyncClient(
            base_url=self.config.base_url, headers=self.config.headers(),
            timeout=self.config.timeout,
        )  # fmt: skip

    async def _call(self, call: Call) -> Any:  # type: ignore[override]
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, params=call.params or None, json=call.body
                )
                return answer(call, response)
            except (GraphError, httpx.TransportError) as exc:
                wait = wait_or_raise(call, exc, attempt, self.config)
            await asyncio.sleep(wait)
            attempt += 1

    def _list(self, call: Call, limit: int | None, progress: bool) -> AsyncListing:
        return AsyncListing(self._call, call, limit, progress)

    async def new_followers(
        self, user_id: str, *, last_event_id: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The user's new followers as they follow (Server-Sent Events), each
        ``{"follower", "since", "event_id", "entry_id"}``; pass the last ``entry_id`` as
        ``last_event_id`` to replay what came after it. A replay the server cut short (its
        ``gap`` event) is logged as a warning; a stream the server ends (a revoked key) raises
        the ``GraphError`` its ``closed`` event names."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        path = f"/v1/users/{_u(user_id)}/events"
        async with self._http.stream("GET", path, headers=headers, timeout=None) as response:
            if response.status_code >= 400:
                await response.aread()
                raise error_for(response.status_code, response.json(), dict(response.headers))
            event: dict[str, str] = {}
            async for line in response.aiter_lines():
                if not line:
                    kind, data = event.get("event"), json.loads(event.get("data") or "{}")
                    if kind == "follower":
                        yield {**data, "entry_id": event.get("id")}
                    elif kind == "gap":
                        log.warning("new followers of %s: %s", user_id, data.get("message"))
                    elif kind == "closed":
                        raise GraphError(
                            data.get("message", "stream closed"), code=data.get("code", "")
                        )
                    event = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    event[name] = value.removeprefix(" ")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
