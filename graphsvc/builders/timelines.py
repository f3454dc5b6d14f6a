"""Timelines: the queue of their jobs (pushes, drains, removals), and the service over the
authors' posts and the home timelines, the follow pages and their mirror, filtered by the
reader's mutes, exclusive lists and follow options."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.follow_filters import FollowFilters
from graphsvc.services.lists.exclusions import Exclusions
from graphsvc.services.timelines import Timelines
from graphsvc.workers.bell_jobs import BellJobs
from graphsvc.workers.timeline_jobs import TimelineJobs


def build_timeline_jobs(core: Core) -> TimelineJobs:
    """The kind every process records timeline work with (a serving one queues it)."""
    settings, redis = core.settings, core.redis
    return TimelineJobs(
        redis.author_posts,
        redis.home_timelines,
        redis.list_holders,
        redis.timeline_job_queue,
        core.follow_pages,
        core.jobs,
        settings.timelines,
        settings.worker,
    )


def build_timelines(core: Core, jobs: TimelineJobs, bells: BellJobs) -> Timelines:
    settings = core.settings
    return Timelines(
        core.redis.author_posts,
        core.redis.home_timelines,
        core.follow_pages,
        core.mirror_sync,
        core.neo4j.edges,
        jobs,
        settings.timelines,
        settings.pages,
        settings.writes,
        core.mutes,
        core.neo4j.moderation,
        Exclusions(core.neo4j.lists, core.redis.exclusion_cache),
        FollowFilters(core.neo4j.edges, core.redis.follow_filter_cache),
        bells,
    )
