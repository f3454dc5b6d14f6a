"""The checks an operator runs: the mirror's consistency against Neo4j, and the home
timelines' against their rules."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.consistency import Consistency
from graphsvc.services.timeline_check import TimelineCheck
from graphsvc.services.timelines import Timelines


def build_consistency(core: Core) -> Consistency:
    neo4j, redis = core.neo4j, core.redis
    return Consistency(
        (neo4j.snapshots, neo4j.mutes, neo4j.privacy),
        (redis.mirror_state, redis.statuses, redis.mutes, redis.privacy),
        redis.mirror,
        redis.leases,
        (core.mirror_sync, core.mutes, core.privacy),
        core.settings.mirror.rebuild_batch_users,
    )


def build_timeline_check(core: Core, timelines: Timelines) -> TimelineCheck:
    settings = core.settings
    return TimelineCheck(
        core.redis.author_posts,
        core.redis.home_timelines,
        core.follow_pages,
        timelines,
        settings.timelines,
        settings.writes.max_following,
    )
