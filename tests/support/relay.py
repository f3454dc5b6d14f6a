"""A TCP relay to Neo4j that a test can break as a network breaks: fall silent (every
connection kept open, no byte passed either way, as a peer gone without a word: a cut cable,
a paused host, where no timeout of Neo4j's own can fire), or cut every connection it holds
(as a restarted proxy or a dropped route does)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from graphsvc.adapters.neo4j.store import Neo4jStore, open_driver
from graphsvc.settings import Settings


class Neo4jRelay:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.silent = asyncio.Event()
        self.server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> int:
        """The relay's port."""
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        self.cut()

    def cut(self) -> None:
        """Close every connection relayed so far, both ends; later ones pass as before."""
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._writers += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while chunk := await source.read(65536):
                if self.silent.is_set():
                    await asyncio.Event().wait()  # holds the connection open, passes nothing
                sink.write(chunk)
                await sink.drain()

        with contextlib.suppress(ConnectionError, OSError):  # cut
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@contextlib.asynccontextmanager
async def relayed_store(
    settings: Settings, *, retry_seconds: float, tx_timeout: float
) -> AsyncIterator[tuple[Neo4jRelay, Neo4jStore]]:
    """A store whose driver reaches ``settings``' Neo4j through a relay, with one connection
    already pooled (the statements after it meet what the relay does to it)."""
    host, port = settings.neo4j.neo4j_uri.removeprefix("bolt://").split(":")
    relay = Neo4jRelay((host, int(port)))
    async with relay as relay_port:
        relayed = settings.with_values(neo4j_uri=f"bolt://127.0.0.1:{relay_port}")
        driver = open_driver(relayed.neo4j)
        try:
            store = Neo4jStore(
                driver,
                relayed.neo4j.neo4j_database,
                retry_seconds,
                timeout=tx_timeout,
                job_timeout=60,
            )
            await store.read("suggestions/edge_count", {})  # a connection, pooled
            yield relay, store
        finally:
            with contextlib.suppress(Exception):  # its connection may hang, silent
                await asyncio.wait_for(driver.close(), 5)
