"""The health route: 200 while Neo4j answers (503 otherwise), saying whether Redis does."""

from __future__ import annotations

from fastapi import APIRouter, Request

from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.wire.schemas import HealthBody

router = APIRouter(generate_unique_id_function=operation_id)


@router.get(
    "/healthz",
    response_model=HealthBody,
    tags=["operations"],
    summary="Both backing stores answer",
)
async def health(request: Request) -> HealthBody:
    return HealthBody(**await services_of(request).health.check())
