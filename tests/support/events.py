"""The event stream and the Server-Sent Events of new followers, as tests read them: the
stream's entries about some users, the app served by a real uvicorn (SSE needs a streaming
server), and the next event of a stream's lines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import uvicorn

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from tests.support.helpers import free_port


async def events_after(service: Services, start: str, users: set[str]) -> list[dict]:
    """Stream entries after ``start`` that involve ``users``, oldest first."""
    found: list[dict] = []
    after = start
    while entries := await service.core.redis.stream.read(after, 1_000):
        after = entries[-1][0]
        found += [f for _, f in entries if f["src"] in users or f["dst"] in users]
    return found


@asynccontextmanager
async def serving(service: Services) -> AsyncIterator[str]:
    """The app served by a real uvicorn on a free port (SSE needs a streaming server)."""
    port = free_port()
    # A stream a test left open does not hold the server's stop for longer than the grace.
    config = uvicorn.Config(
        create_app(service.settings, service),
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    async with asyncio.timeout(30):
        while not server.started:  # uvicorn offers no event to wait on
            assert not task.done(), "uvicorn ended before it started serving"
            await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await service.follower_events.close()
        await service.notifications.close()
        await asyncio.wait_for(task, 30)


@pytest.fixture
async def served_app(service: Services) -> AsyncIterator[str]:
    """The suite's service served by a real uvicorn (a test module binds it to the name its
    tests ask for: ``served = events.served_app``)."""
    async with serving(service) as url:
        yield url


async def next_event(lines: AsyncIterator[str]) -> tuple[str, str, str]:
    """(event, id, data) of the next event: an event ends at a blank line, and its fields may
    come in any order (the SSE format)."""
    event, event_id, data = "", "", ""
    async for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data = line[6:]
        elif not line and data:
            return event, event_id, data
    raise AssertionError("stream ended")


async def next_follower(lines: AsyncIterator[str]) -> tuple[str, str]:
    """(id, data) of the next event, a follower event."""
    event, event_id, data = await next_event(lines)
    assert event == "follower", (event, data)
    return event_id, data
