"""Lists: the curated lists with their timelines and the exclusions of their owners' home
timelines, the follows of lists, and the subscriptions to moderation lists with the kind of job
that does their work (recorded by a serving process, run by the workers)."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.concurrency.jobs import JobKind, Recorded
from graphsvc.services.lists.curated import Lists
from graphsvc.services.lists.exclusions import Exclusions
from graphsvc.services.lists.follows import ListFollows
from graphsvc.services.lists.subscriptions import JOB, ListSubscriptions
from graphsvc.services.lists.timelines import ListTimelines
from graphsvc.workers.subscription_sync import SubscriptionSync


def build_exclusions(core: Core) -> Exclusions:
    return Exclusions(core.neo4j.lists, core.redis.exclusion_cache)


def build_lists(core: Core) -> Lists:
    settings, redis = core.settings, core.redis
    list_timelines = ListTimelines(
        core.neo4j.lists,
        redis.author_posts,
        redis.home_timelines,
        redis.list_holders,
        core.mirror_sync,
        core.mutes,
        settings.timelines,
        settings.pages,
    )
    return Lists(
        core.neo4j.lists,
        list_timelines,
        build_exclusions(core),
        redis.stream,
        settings.lists,
        settings.pages,
    )


def build_list_follows(core: Core) -> ListFollows:
    return ListFollows(core.neo4j.list_follows, core.settings.lists, core.settings.pages)


def build_subscription_sync(core: Core) -> JobKind:
    """The workers run it; a serving process records its jobs by name only."""
    if not core.jobs.here:
        return Recorded(JOB)
    settings = core.settings
    return SubscriptionSync(
        core.neo4j.subscriptions, core.relations, core.mutes, settings.lists, settings.worker
    )


def build_list_subscriptions(core: Core) -> ListSubscriptions:
    settings = core.settings
    return ListSubscriptions(
        core.neo4j.subscriptions,
        core.jobs,
        build_subscription_sync(core),
        settings.lists,
        settings.pages,
    )
