"""Bells: the job kind that rings a new post's notification into its author's bell-ringers'
notification streams (every process records it; the workers run it), and the streams'
Server-Sent Events (a serving process's)."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.access import KeyRing
from graphsvc.services.notifications import NotificationChecks, Notifications
from graphsvc.services.rate_limits import RateLimits
from graphsvc.workers.bell_jobs import BellJobs


def build_bell_jobs(core: Core) -> BellJobs:
    settings, redis = core.settings, core.redis
    return BellJobs(
        core.neo4j.bells,
        redis.notification_streams,
        redis.bell_flags,
        redis.author_posts,
        redis.bell_job_queue,
        core.jobs,
        settings.notifications,
        settings.timelines,
        settings.worker,
    )


def build_notifications(core: Core, access: KeyRing, rate_limits: RateLimits) -> Notifications:
    settings, redis = core.settings, core.redis
    checks = NotificationChecks(core.mutes, core.mirror_sync, core.neo4j.bells, redis.author_posts)
    return Notifications(
        redis.notification_streams,
        redis.stream_slots,
        access,
        rate_limits,
        settings.events,
        settings.notifications,
        checks,
    )
