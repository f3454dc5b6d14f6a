"""The operators' one door to the stores (``services/maintenance.py``)."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.maintenance import Maintenance


def build_maintenance(core: Core) -> Maintenance:
    neo4j, redis = core.neo4j, core.redis
    return Maintenance(
        neo4j.store,
        neo4j.bulk,
        neo4j.snapshots,
        neo4j.moderation,
        neo4j.suggestions,
        redis.mirror_builds,
        redis.client,
        exports=neo4j.exports,
        ranker_models=neo4j.ranker_models,
        leases=redis.leases,
    )
