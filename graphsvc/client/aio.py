"""``AsyncGraphClient``: the same methods as ``GraphClient``, awaited (services)."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

import httpx

from graphsvc.client._core import Call, ClientConfig, decode, retry_delay
from graphsvc.client._routes import Routes
from graphsvc.client.errors import GraphError, Unavailable
from graphsvc.client.listing import AsyncListing


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
                payload = response.json() if response.content else None
                return decode(call, response.status_code, payload, dict(response.headers))
            except (GraphError, httpx.TransportError) as exc:
                error = exc if isinstance(exc, GraphError) else Unavailable(str(exc))
                wait = retry_delay(call, error, attempt, self.config)
                if wait is None:
                    raise error from exc if error is not exc else None
                await asyncio.sleep(wait)
                attempt += 1

    def _list(self, call: Call, limit: int | None, progress: bool) -> AsyncListing:
        return AsyncListing(self._call, call, limit, progress)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
