"""The services every feature builds on: the write order and the edge writes, the mirror's
builds from Neo4j, follow requests, the privacy settings that every read checks, the lists and
the mutes, all behind the one Redis breaker; and the runner of this process's durable jobs."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.adapters.connections import Connections
from graphsvc.adapters.redis.client import redis_breaker
from graphsvc.builders.stores import Neo4jAdapters, RedisAdapters
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.jobs import JobKind, Jobs, Recorded
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.services.follow_pages import FollowPages
from graphsvc.services.follow_requests import FollowRequests
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.mutes import Mutes
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.relations import Relations
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.writes import Writes
from graphsvc.settings import Settings
from graphsvc.workers.request_approvals import RequestApprovals


@dataclass(frozen=True, slots=True)
class Core:
    settings: Settings
    neo4j: Neo4jAdapters
    redis: RedisAdapters
    breaker: Breaker
    jobs: Jobs
    feedback: SuggestionFeedback
    writes: Writes
    mirror_sync: MirrorSync
    relations: Relations
    approvals: JobKind
    follow_requests: FollowRequests
    privacy: PrivacyRules
    follow_pages: FollowPages
    mutes: Mutes

    @property
    def plans(self) -> WarmUp:
        """Neo4j's plans of the write statements, made before the first request."""
        return self.neo4j.edges.plans


def build_core(
    settings: Settings,
    connections: Connections,
    *,
    serve: bool = False,
    jobs: bool = False,
    split_page: bool | None = None,
) -> Core:
    """``serve``: a serving process, which records jobs and leaves them to the workers.
    ``jobs``: a process of long jobs, whose Neo4j statements have NEO4J_JOB_TIMEOUT_SECONDS."""
    neo4j = Neo4jAdapters(settings.neo4j, connections.driver, jobs=jobs)
    redis = RedisAdapters(
        settings, connections.redis, connections.multiplexed, split_page=split_page
    )
    breaker = redis_breaker(settings.redis.redis_retry_seconds)
    runner = Jobs(
        redis.leases,
        concurrency=settings.worker.worker_jobs,
        round_seconds=settings.worker.worker_poll_seconds,
        here=not serve,
    )
    feedback = SuggestionFeedback(
        redis.feedback_counters, neo4j.ranker_models, breaker, settings.suggestions, settings.pages
    )
    writes = _writes(neo4j, redis, breaker)
    sync = MirrorSync(
        neo4j.snapshots, neo4j.moderation, redis.mirror_builds, redis.statuses, settings.mirror
    )
    relations = Relations(
        neo4j.edges, writes, settings.writes, settings.pages, feedback, neo4j.subscriptions
    )
    approvals: JobKind = (
        Recorded(RequestApprovals.name)
        if serve
        else RequestApprovals(neo4j.requests, relations, settings.worker)
    )
    follow_requests = FollowRequests(neo4j.requests, runner, approvals, settings.pages)
    privacy = PrivacyRules(
        neo4j.privacy, redis.privacy, neo4j.edges, writes, breaker, follow_requests
    )
    follow_pages = FollowPages(
        neo4j.pages,
        neo4j.snapshots,
        neo4j.edges,
        redis.mirror_reads,
        sync,
        privacy,
        neo4j.requests,
        breaker,
        settings.pages,
    )
    mutes = Mutes(
        neo4j.mutes, redis.mutes, writes, settings.writes, settings.pages, neo4j.subscriptions
    )
    return Core(
        settings, neo4j, redis, breaker, runner, feedback, writes, sync, relations, approvals,
        follow_requests, privacy, follow_pages, mutes,
    )  # fmt: skip


def _writes(neo4j: Neo4jAdapters, redis: RedisAdapters, breaker: Breaker) -> Writes:
    """The write order: Neo4j first, then every Redis structure an edge change touches."""
    return Writes(
        redis.mirror,
        redis.statuses,
        redis.privacy,
        redis.stream,
        redis.suggestion_cache,
        redis.home_timelines,
        breaker,
        redis.mutes,
        neo4j.snapshots.read_counts,
    )
