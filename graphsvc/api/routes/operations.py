"""Routes for operators and their probes, none of which needs a key: liveness (no
dependency is called, so a Neo4j blip never restarts a pod), readiness (Neo4j must answer;
Redis need not, reads then come from Neo4j; a stale suggestion ranker is told, not failed),
and the Prometheus metrics."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.wire.schemas import ErrorBody, LiveBody, ReadyBody

router = APIRouter(generate_unique_id_function=operation_id)


@router.get(
    "/livez",
    response_model=LiveBody,
    tags=["operations"],
    summary="The process answers (no store is called)",
)
async def livez() -> LiveBody:
    return LiveBody(status="ok")


@router.get(
    "/readyz",
    response_model=ReadyBody,
    responses={
        503: {
            "model": ErrorBody,
            "description": "Neo4j does not answer (neo4j_unavailable), or is back after an "
            "outage and the write statements are being planned again (store_warming)",
        }
    },
    tags=["operations"],
    summary="Ready to serve: Neo4j answers (Redis may be unavailable: reads then use Neo4j)",
)
async def readyz(request: Request) -> ReadyBody:
    return ReadyBody(**await services_of(request).health.ready())


def _registry() -> CollectorRegistry:
    """Every worker's values under PROMETHEUS_MULTIPROC_DIR, else this process's."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def forget_this_process() -> None:
    """A worker that stops drops its live gauges from the shared files (livesum, livemax)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(os.getpid())


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
    tags=["operations"],
    summary="Prometheus metrics: requests by route and status, and the service's own",
)
async def metrics(request: Request) -> Response:
    await services_of(request).gauges.refresh()
    return Response(generate_latest(_registry()), media_type=CONTENT_TYPE_LATEST)
