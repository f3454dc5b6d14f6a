"""The ASGI app: the lifespan that opens the services, the middleware, the one error handler
family, and the routers, one per family of routes."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from starlette.routing import BaseRoute

from graphsvc.api.http.access import check_guarded, document_security
from graphsvc.api.http.contract import add_examples, state_settings
from graphsvc.api.http.errors import install_error_handlers
from graphsvc.api.http.front import Front
from graphsvc.api.http.lean import LeanRoute
from graphsvc.api.http.observability import json_request_logs
from graphsvc.api.routes import (
    audiences,
    changes,
    events,
    follow_requests,
    health,
    keys,
    list_subscriptions,
    lists,
    moderation,
    moves,
    mutes,
    operations,
    pages,
    portable,
    privacy,
    relations,
    suggestions,
    timelines,
)
from graphsvc.api.routes.operations import forget_this_process
from graphsvc.bootstrap import Serving, open_serving
from graphsvc.settings import Settings, get_settings, refuse_development_secrets
from graphsvc.version import __version__

# The routers, one per family of routes (relations has a second, for its one route with a
# body), in the order their routes are matched.
ROUTERS = (
    relations.router,
    relations.with_body,
    mutes.router,
    follow_requests.router,
    privacy.router,
    pages.router,
    lists.router,
    list_subscriptions.router,
    changes.router,
    audiences.router,
    moderation.router,
    suggestions.router,
    timelines.router,
    keys.router,
    health.router,
    operations.router,
    events.router,
    portable.router,
    moves.router,
)
# The lean lane and the router try these first, in this order: the routes most requests are
# for. No request can match two routes (tests/unit holds it), so the order decides only how
# many patterns a request is tried against before its own.
HOTTEST = (
    "list_followers",
    "get_counts",
    "list_following",
    "get_timeline",
    "follow",
    "unfollow",
    "publish_post",
    "get_relationships",
)


# The collector's thresholds in a serving process (settle_the_heap).
YOUNG_OLD_THRESHOLDS = (50_000, 20, 100)

# The route families of the OpenAPI document, in the order a reader meets them; every route
# names one (tests/unit holds it).
TAGS = [
    {"name": "relations", "description": "Follow, unfollow, remove followers, relationships."},
    {
        "name": "pages",
        "description": "Followers, following, friends, counts; common and familiar follows.",
    },
    {
        "name": "lists",
        "description": "Curated lists: their owners' changes, their members, who may see them.",
    },
    {"name": "changes", "description": "Who followed and unfollowed since a moment, and why."},
    {"name": "audiences", "description": "Counts and pages of set algebra over users' lists."},
    {"name": "privacy", "description": "Who sees a user's lists and counts; discoverable; locked."},
    {"name": "follow requests", "description": "Follows of a locked user, waiting for its answer."},
    {"name": "blocks", "description": "Blocks and the list of them (its owner's alone)."},
    {"name": "mutes", "description": "Mutes: hidden posts, suggestions and notifications."},
    {"name": "moderation", "description": "A user's status (suspended, spam) and erasure."},
    {
        "name": "people you may know",
        "description": "Suggestions, similar accounts, dismissals, impressions, interactions.",
    },
    {"name": "timelines", "description": "Posts and home timelines."},
    {
        "name": "moves",
        "description": "Aliases and account moves: followers follow the new account.",
    },
    {
        "name": "portable",
        "description": "Exports and imports of follows, blocks, mutes and lists (Mastodon's CSV).",
    },
    {"name": "keys", "description": "API keys and their scopes (admin)."},
    {"name": "internal", "description": "What operators ask of the ranker (the internal scope)."},
    {"name": "operations", "description": "Probes and metrics: no key needed."},
]


def create_app(settings: Settings | None = None, services: Serving | None = None) -> FastAPI:
    """The ASGI app. Pass ``services`` to serve already-open ones (tests, notebooks): their
    owner closes them; otherwise the app opens its own, serving only: background work is
    left to `graphsvc worker`."""
    settings = settings or get_settings()
    refuse_development_secrets(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if services is not None:  # already open, owned by the caller
            yield
            return
        async with open_serving(settings) as opened:
            app.state.services = opened
            settle_the_heap()
            yield
        forget_this_process()

    # /docs (Swagger UI) and /redoc from assets installed with the service, never a CDN: they
    # work offline and load nothing from another host
    app = FastAPIOffline(
        title="graphsvc",
        version=__version__,
        summary="Follow-graph relations: Neo4j holds the truth, Redis mirrors hot lists and counts.",
        openapi_tags=TAGS,
        lifespan=lifespan,
        # no 307 from ".../" to "...": a client following it could be led to another route
        redirect_slashes=False,
        # the service exports Prometheus metrics of its own; the framework's OpenTelemetry
        # hooks, unconfigured, would still look for providers on every request
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    install_error_handlers(app)
    lean = sorted(
        (r for router in ROUTERS for r in router.routes if isinstance(r, LeanRoute)), key=_heat
    )
    # the one layer before the routes: telemetry, noted headers, the key, the body's bound,
    # and the lean routes, served before the framework's router (front.py)
    app.add_middleware(
        Front,
        routes=lean,
        max_bytes=settings.api.request_body_max_bytes,
        imports_max_bytes=settings.portable.import_max_bytes,
        deadline_seconds=settings.neo4j.neo4j_tx_timeout_seconds
        + settings.api.request_deadline_margin_seconds,
        log_requests=settings.api.log_json,
    )
    if settings.api.log_json:
        json_request_logs()
    if services is not None:
        app.state.services = services
    # The app's own routes, matched in one flat list as if declared on the app: FastAPI's
    # include_router keeps the router and matches through it on every request, a cost every
    # request paid (docs/performance.md); the hottest first, as in the lean lane.
    app.router.routes.extend(sorted((r for router in ROUTERS for r in router.routes), key=_heat))
    check_guarded(app)
    _document(app, settings)
    return app


def _heat(route: BaseRoute) -> int:
    name = getattr(route, "name", None)
    return HOTTEST.index(name) if name in HOTTEST else len(HOTTEST)


def settle_the_heap() -> None:
    """Move everything built at start-up out of the garbage collector's sight.

    A serving process holds a great many long-lived objects once started (the app, its routes
    and schemas, the drivers, the libraries), and every full collection walked all of them,
    holding the event loop long enough to set a page's p99 (docs/performance.md, "The garbage
    collector at start-up"). Frozen, they are never walked again. Objects made later are
    collected less often than the interpreter's defaults would (a young collection per 50,000
    allocations, not 700; an old one per 20 and 100 of those): a request allocates thousands
    of objects, and at the defaults every few requests paused for a collection, which set the
    p99 of the shortest requests (a publish, a count); the garbage they leave is acyclic and
    freed at once all the same."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*YOUNG_OLD_THRESHOLDS)


def _document(app: FastAPI, settings: Settings) -> None:
    """The bearer scheme and auth errors (the Authorize button of /docs), and the rules that
    come from settings, in the OpenAPI document."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            documented = document_security(add_examples(generate()))
            app.openapi_schema = state_settings(documented, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
