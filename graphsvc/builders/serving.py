"""What only a serving process needs beside the features' services: the new-follower
streams, and the health its probes read (with the gauges of the outbox and the ranker)."""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.builders.core import Core
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.services.access import KeyRing
from graphsvc.services.follower_events import FollowerEvents
from graphsvc.services.health import Gauges, Health
from graphsvc.services.ranker import RankerSource
from graphsvc.services.rate_limits import RateLimits


def build_follower_events(core: Core, access: KeyRing, rate_limits: RateLimits) -> FollowerEvents:
    return FollowerEvents(
        core.redis.stream,
        core.redis.stream_slots,
        access,
        rate_limits,
        core.settings.events,
        core.mutes,
        core.mirror_sync,
    )


def build_health(
    core: Core, ranker: RankerSource, plans: Sequence[WarmUp]
) -> tuple[Health, Gauges]:
    """The probes' checks (ready once ``plans`` are made again after Neo4j was lost) and the
    gauges of the outbox's backlog and the ranker's staleness."""
    health = Health(core.neo4j.store, core.redis.mirror, ranker, plans)
    return health, Gauges(core.neo4j.outbox, ranker)
