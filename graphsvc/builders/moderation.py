"""Suspensions, status propagations and erasures: the service that marks them, and the jobs
that carry them through every store a user is in (built only where they run)."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.concurrency.jobs import JobKind
from graphsvc.services.access import KeyRing
from graphsvc.services.moderation import Moderation
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.timeline_erasure import TimelineErasure


def build_moderation(core: Core, work: JobKind, access: KeyRing) -> Moderation:
    return Moderation(core.neo4j.moderation, core.writes, core.jobs, work, access)


def build_moderation_jobs(
    core: Core, flusher: InteractionFlusher, access: KeyRing
) -> ModerationJobs:
    settings, neo4j, redis = core.settings, core.neo4j, core.redis
    return ModerationJobs(
        neo4j.moderation,
        neo4j.snapshots,
        neo4j.edges,
        redis.mirror,
        redis.statuses,
        redis.privacy,
        core.writes,
        settings.mirror,
        settings.worker,
        flusher,
        redis.impressions,
        access,
        core.mutes,
        TimelineErasure(
            redis.author_posts,
            redis.home_timelines,
            redis.list_holders,
            redis.exclusion_cache,
            redis.notification_streams,
            redis.timeline_job_queue,
            settings.timelines,
        ),
        neo4j.lists,
        neo4j.subscriptions,
    )
