"""The health route: 200 while Neo4j answers (503 otherwise), saying whether Redis does."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from graphsvc.api.params import services_of

router = APIRouter()


class HealthBody(BaseModel):
    neo4j: str = Field(examples=["ok"])
    redis: str = Field(
        examples=["ok"], description="ok, or unavailable (reads are then served from Neo4j)"
    )


@router.get(
    "/healthz",
    response_model=HealthBody,
    tags=["operations"],
    summary="Both backing stores answer",
)
async def health(request: Request) -> HealthBody:
    return HealthBody(**await services_of(request).health.check())
