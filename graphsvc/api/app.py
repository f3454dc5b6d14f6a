"""The ASGI app: the lifespan that opens the services, the middleware, the one error handler
family, and the routers, one per family of routes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from graphsvc.api import events, health, lists, moderation, relations, suggestions
from graphsvc.api.errors import install_error_handlers
from graphsvc.api.middleware import GraphSourceHeader
from graphsvc.bootstrap import Services, open_services
from graphsvc.settings import Settings, get_settings
from graphsvc.version import __version__


def create_app(settings: Settings | None = None, services: Services | None = None) -> FastAPI:
    """The ASGI app. Pass ``services`` to serve already-open ones (tests, notebooks): their
    owner closes them; otherwise the app opens its own, with the serving loops running."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if services is not None:  # already open, owned by the caller
            yield
            return
        async with open_services(settings, resume=True) as opened:
            app.state.services = opened
            yield

    app = FastAPI(
        title="graphsvc",
        version=__version__,
        summary="Follow-graph relations: Neo4j holds the truth, Redis mirrors hot lists and counts.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.add_middleware(GraphSourceHeader)
    if services is not None:
        app.state.services = services
    for family in (relations, lists, moderation, suggestions, health, events):
        # The app's own routes, matched in one flat list as if declared on the app: FastAPI's
        # include_router keeps the router and matches through it on every request, which cost
        # reads 10-15% of their throughput here (make bench and an interleaved A/B).
        app.router.routes.extend(family.router.routes)
    return app
