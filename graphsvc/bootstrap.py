"""The composition root: open the two stores' connections, and build every adapter and
service once, wired together (Cosmic Python's ``bootstrap``). The API, the CLI, tests and
notebooks all start here; nothing else constructs a service.

``build`` does no I/O, so tests can build services with other settings over connections
they share; ``open_services`` opens the connections and applies the schema.

Where background work runs is decided here, once. A serving process (``serve=True``) only
records it (marks in Neo4j, jobs queued in Redis) for the workers (``workers/worker.py``) to
run, and runs no loop of its own; every other process (the worker, the CLI, tests, notebooks)
runs the jobs it starts itself, at most WORKER_JOBS at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from neo4j import AsyncDriver

from graphsvc.adapters.neo4j.bulk import BulkStore
from graphsvc.adapters.neo4j.changes import ChangeStore
from graphsvc.adapters.neo4j.cold_start import ColdStartStore
from graphsvc.adapters.neo4j.exports import ExportStore
from graphsvc.adapters.neo4j.keys import KeyStore
from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.neo4j.mutes import MuteStore
from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.neo4j.privacy import PrivacyStore
from graphsvc.adapters.neo4j.ranker_models import RankerModelStore
from graphsvc.adapters.neo4j.requests import RequestStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.neo4j.store import EdgeStore, Neo4jStore, open_driver
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.auth_failures import AuthFailures
from graphsvc.adapters.redis.client import REDIS_DOWN, Client, open_redis, redis_breaker
from graphsvc.adapters.redis.cold_start import ColdStartLists
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.impressions import ImpressionStore
from graphsvc.adapters.redis.interactions import InteractionBuffer
from graphsvc.adapters.redis.leases import Leases
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.mirror_builds import MirrorBuilds
from graphsvc.adapters.redis.mirror_reads import MirrorReads
from graphsvc.adapters.redis.mirror_state import MirrorState
from graphsvc.adapters.redis.mutes import MuteMirror
from graphsvc.adapters.redis.privacy import PrivacyMirror
from graphsvc.adapters.redis.rate_limits import RateLimitStore
from graphsvc.adapters.redis.recommendations import LoopCounters
from graphsvc.adapters.redis.series_cache import SeriesCache
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.adapters.redis.stream_slots import StreamSlots
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.adapters.redis.timelines import Inboxes, Outboxes, TimelineJobQueue
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.jobs import Jobs
from graphsvc.services.access import KeyRing
from graphsvc.services.audiences import Audiences
from graphsvc.services.changes import Changes
from graphsvc.services.distance import Distances
from graphsvc.services.follow_requests import FollowRequests
from graphsvc.services.follower_events import FollowerEvents
from graphsvc.services.graph_lists import GraphLists
from graphsvc.services.health import Gauges, Health
from graphsvc.services.impressions import Impressions
from graphsvc.services.interactions import Interactions
from graphsvc.services.lists import Lists
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.moderation import Moderation
from graphsvc.services.mutes import Mutes
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.ranker import RankerSource
from graphsvc.services.rate_limits import RateLimits
from graphsvc.services.recommendations import Recommendations
from graphsvc.services.relations import Relations
from graphsvc.services.series import GrowthSeries
from graphsvc.services.similar import SimilarAccounts
from graphsvc.services.suggestion_explainer import SuggestionExplainer
from graphsvc.services.suggestions import Suggestions
from graphsvc.services.timelines import Timelines
from graphsvc.services.writes import Writes
from graphsvc.settings import Neo4jSettings, Settings
from graphsvc.workers.change_expiry import ChangeExpiry
from graphsvc.workers.cold_start_lists import ColdStartKeeper
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.ranker_training import RankerTraining
from graphsvc.workers.relay import Relay
from graphsvc.workers.request_approvals import RequestApprovals
from graphsvc.workers.timeline_erasure import TimelineErasure
from graphsvc.workers.timeline_events import TimelineEvents
from graphsvc.workers.timeline_jobs import TimelineJobs
from graphsvc.workers.worker import Worker

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Connections:
    """The Neo4j driver and the Redis client (a pool each), shared by everything built."""

    driver: AsyncDriver
    redis: Client

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings) -> AsyncIterator[Connections]:
        driver = open_driver(settings.neo4j)
        client = open_redis(settings.redis)
        try:
            await driver.verify_connectivity()
            try:
                await client.ping()
            except REDIS_DOWN as exc:  # served from Neo4j until it answers
                log.warning("redis does not answer at start-up (%s)", exc)
            yield cls(driver, client)
        finally:
            await client.aclose()
            await driver.close()


@dataclass(frozen=True, slots=True)
class Neo4jAdapters:
    store: Neo4jStore
    edges: EdgeStore
    snapshots: SnapshotStore
    lists: ListStore
    moderation: ModerationStore
    mutes: MuteStore
    outbox: OutboxStore
    suggestions: SuggestionStore
    ranker_models: RankerModelStore
    bulk: BulkStore
    keys: KeyStore
    privacy: PrivacyStore
    requests: RequestStore
    cold_start: ColdStartStore
    changes: ChangeStore
    exports: ExportStore


@dataclass(frozen=True, slots=True)
class RedisAdapters:
    client: Client
    mirror: Mirror
    mirror_reads: MirrorReads
    mirror_builds: MirrorBuilds
    statuses: StatusSet
    privacy: PrivacyMirror
    mirror_state: MirrorState
    mutes: MuteMirror
    stream: EventStream
    stream_slots: StreamSlots
    interactions: InteractionBuffer
    suggestion_cache: SuggestionCache
    impressions: ImpressionStore
    loop_counters: LoopCounters
    rate_limits: RateLimitStore
    outboxes: Outboxes
    inboxes: Inboxes
    timeline_job_queue: TimelineJobQueue
    leases: Leases
    auth_failures: AuthFailures
    cold_start: ColdStartLists
    series: SeriesCache


@dataclass(frozen=True, slots=True)
class Services:
    """Everything built, by name. Routes and commands take the one service they call."""

    settings: Settings
    neo4j: Neo4jAdapters
    redis: RedisAdapters
    breaker: Breaker
    writes: Writes
    jobs: Jobs
    mirror_sync: MirrorSync
    relations: Relations
    follow_requests: FollowRequests
    mutes: Mutes
    privacy: PrivacyRules
    lists: Lists
    graph_lists: GraphLists
    changes: Changes
    audiences: Audiences
    distances: Distances
    growth_series: GrowthSeries
    moderation: Moderation
    interactions: Interactions
    suggestions: Suggestions
    similar: SimilarAccounts
    suggestion_explainer: SuggestionExplainer
    impressions: Impressions
    recommendations: Recommendations
    relay: Relay
    interaction_flusher: InteractionFlusher
    ranker_training: RankerTraining
    follower_events: FollowerEvents
    health: Health
    gauges: Gauges
    access: KeyRing
    rate_limits: RateLimits
    timelines: Timelines
    timeline_jobs: TimelineJobs
    timeline_events: TimelineEvents
    cold_start_lists: ColdStartKeeper
    worker: Worker

    async def close(self) -> None:
        """Stop what runs in the background (a worker resumes the unfinished jobs)."""
        await self.follower_events.close()
        await self.jobs.close()


def neo4j_adapters(
    settings: Neo4jSettings, driver: AsyncDriver, *, jobs: bool = False
) -> Neo4jAdapters:
    """``jobs``: every statement is a long job's (NEO4J_JOB_TIMEOUT_SECONDS); else a
    request's (NEO4J_TX_TIMEOUT_SECONDS), but for those the adapters mark as a job's."""
    store = Neo4jStore(
        driver,
        settings.neo4j_database,
        settings.neo4j_retry_seconds,
        timeout=settings.neo4j_tx_timeout_seconds,
        job_timeout=settings.neo4j_job_timeout_seconds,
        jobs=jobs,
    )
    snapshots = SnapshotStore(store)
    return Neo4jAdapters(
        store=store,
        edges=EdgeStore(store, snapshots.clock, snapshots.read_counts),
        snapshots=snapshots,
        lists=ListStore(store),
        moderation=ModerationStore(store),
        mutes=MuteStore(store),
        outbox=OutboxStore(store),
        suggestions=SuggestionStore(store),
        ranker_models=RankerModelStore(store),
        bulk=BulkStore(store),
        keys=KeyStore(store),
        privacy=PrivacyStore(store),
        requests=RequestStore(store),
        cold_start=ColdStartStore(store),
        changes=ChangeStore(store),
        exports=ExportStore(store),
    )


def redis_adapters(
    settings: Settings, client: Client, *, split_page: bool | None = None
) -> RedisAdapters:
    """``split_page``: filter mirror pages in a second round trip (default: on a cluster)."""
    keys = settings.redis  # where each adapter's keys live
    statuses = StatusSet(client, keys)
    privacy = PrivacyMirror(client, keys)
    mirror = Mirror(client, keys, settings.mirror)
    return RedisAdapters(
        client=client,
        mirror=mirror,
        mirror_reads=MirrorReads(mirror, statuses, privacy, split_page=split_page),
        mirror_builds=MirrorBuilds(mirror, settings.mirror),
        statuses=statuses,
        privacy=privacy,
        mirror_state=MirrorState(mirror),
        mutes=MuteMirror(client, mirror),
        stream=EventStream(client, settings.events),
        stream_slots=StreamSlots(client, keys),
        interactions=InteractionBuffer(client, keys),
        suggestion_cache=SuggestionCache(client, keys, settings.suggestions),
        impressions=ImpressionStore(client, keys, settings.suggestions, settings.bounds),
        loop_counters=LoopCounters(client, keys, settings.suggestions),
        rate_limits=RateLimitStore(keys, settings.access),
        outboxes=Outboxes(client, mirror, statuses, keys, settings.timelines),
        inboxes=Inboxes(client, mirror, keys, settings.timelines),
        timeline_job_queue=TimelineJobQueue(client, keys),
        leases=Leases(client, keys),
        auth_failures=AuthFailures(client, keys, settings.access),
        cold_start=ColdStartLists(client, keys),
        series=SeriesCache(client, keys, settings.changes),
    )


def build(
    settings: Settings,
    connections: Connections,
    *,
    split_page: bool | None = None,
    serve: bool = False,
    jobs: bool = False,
) -> Services:
    """Every adapter and service, wired; no I/O. ``serve``: a serving process, which leaves
    background jobs to the workers. ``jobs``: a process of long jobs (a worker, a CLI
    command), whose Neo4j statements have NEO4J_JOB_TIMEOUT_SECONDS each."""
    neo4j = neo4j_adapters(settings.neo4j, connections.driver, jobs=jobs)
    redis = redis_adapters(settings, connections.redis, split_page=split_page)
    breaker = redis_breaker(settings.redis.redis_retry_seconds)
    jobs_runner = _jobs_runner(settings, redis, serve=serve)
    loop = _loop(settings, neo4j, redis, breaker)
    core = _mirrored(settings, neo4j, redis, breaker, jobs_runner, loop)
    writes, sync, privacy, lists = core.writes, core.sync, core.privacy, core.lists
    pymk = _people_you_may_know(settings, neo4j, redis, breaker, privacy, loop)
    access = KeyRing(neo4j.keys, redis.auth_failures, settings.access)
    work = _workers(settings, neo4j, redis, core, jobs_runner, access, pymk.suggestions)
    rate_limits = RateLimits(redis.rate_limits, settings.access, settings.redis)
    timelines = _timelines(settings, neo4j, redis, core, work.timeline_jobs)
    return Services(
        settings=settings,
        neo4j=neo4j,
        redis=redis,
        breaker=breaker,
        writes=writes,
        jobs=work.jobs,
        mirror_sync=sync,
        relations=core.relations,
        follow_requests=core.follow_requests,
        mutes=core.mutes,
        privacy=privacy,
        lists=lists,
        **_graph_reads(settings, neo4j, redis, privacy),
        moderation=Moderation(neo4j.moderation, writes, work.jobs, work.moderation_jobs, access),
        interactions=pymk.interactions,
        suggestions=pymk.suggestions,
        similar=pymk.similar,
        suggestion_explainer=pymk.explainer,
        impressions=pymk.impressions,
        recommendations=loop,
        relay=work.relay,
        interaction_flusher=work.flusher,
        ranker_training=work.training,
        follower_events=_follower_events(settings, redis, core, access, rate_limits),
        health=Health(neo4j.store, redis.mirror, pymk.suggestions.ranker),
        gauges=Gauges(neo4j.outbox, pymk.suggestions.ranker),
        access=access,
        rate_limits=rate_limits,
        timelines=timelines,
        timeline_jobs=work.timeline_jobs,
        timeline_events=work.consumer,
        cold_start_lists=work.cold_start,
        worker=work.worker,
    )


def _graph_reads(
    settings: Settings, neo4j: Neo4jAdapters, redis: RedisAdapters, privacy: PrivacyRules
) -> dict[str, Any]:
    """What the graph itself answers, each a bounded Neo4j read for a viewer, by the field of
    ``Services`` it fills: the lists the mirror does not hold, the changes and growth series
    of lists over time, the distances between users, audiences over many lists."""
    return {
        "graph_lists": GraphLists(neo4j.lists, privacy, settings.lists, settings.interactions),
        "changes": Changes(neo4j.changes, privacy, settings.changes, settings.lists),
        "growth_series": GrowthSeries(neo4j.changes, redis.series, privacy, settings.changes),
        "distances": Distances(neo4j.lists, settings.lists),
        "audiences": Audiences(neo4j.lists, privacy, settings.lists),
    }


def _follower_events(
    settings: Settings,
    redis: RedisAdapters,
    core: _Mirrored,
    access: KeyRing,
    rate_limits: RateLimits,
) -> FollowerEvents:
    """The new-follower streams, told what lists show: no inactive actor, no muted one."""
    return FollowerEvents(
        redis.stream,
        redis.stream_slots,
        access,
        rate_limits,
        settings.events,
        core.mutes,
        core.sync,
    )


def _jobs_runner(settings: Settings, redis: RedisAdapters, *, serve: bool) -> Jobs:
    """The runner of every durable job in this process; a serving one only records them."""
    return Jobs(
        redis.leases,
        concurrency=settings.worker.worker_jobs,
        round_seconds=settings.worker.worker_poll_seconds,
        here=not serve,
    )


@dataclass(frozen=True, slots=True)
class _Mirrored:
    writes: Writes
    sync: MirrorSync
    relations: Relations
    approvals: RequestApprovals
    follow_requests: FollowRequests
    privacy: PrivacyRules
    lists: Lists
    mutes: Mutes


def _mirrored(
    settings: Settings,
    neo4j: Neo4jAdapters,
    redis: RedisAdapters,
    breaker: Breaker,
    jobs: Jobs,
    loop: Recommendations,
) -> _Mirrored:
    """The services every other one builds on: the write order and the edge writes, the
    mirror's builds from Neo4j, follow requests (with the job that approves them all), the
    privacy settings that every read checks, and the lists, all behind the one Redis
    breaker."""
    writes = Writes(
        redis.mirror,
        redis.statuses,
        redis.privacy,
        redis.stream,
        redis.suggestion_cache,
        redis.inboxes,
        breaker,
        redis.mutes,
        neo4j.snapshots.read_counts,
    )
    sync = MirrorSync(
        neo4j.snapshots, neo4j.moderation, redis.mirror_builds, redis.statuses, settings.mirror
    )
    relations = Relations(neo4j.edges, writes, settings.writes, settings.lists, loop)
    approvals = RequestApprovals(neo4j.requests, relations, settings.worker)
    follow_requests = FollowRequests(neo4j.requests, jobs, approvals, settings.lists)
    privacy = PrivacyRules(
        neo4j.privacy, redis.privacy, neo4j.edges, writes, breaker, follow_requests
    )
    lists = Lists(
        neo4j.lists,
        neo4j.snapshots,
        neo4j.edges,
        redis.mirror_reads,
        sync,
        privacy,
        neo4j.requests,
        breaker,
        settings.lists,
    )
    mutes = Mutes(neo4j.mutes, redis.mutes, writes, settings.writes, settings.lists)
    return _Mirrored(writes, sync, relations, approvals, follow_requests, privacy, lists, mutes)


def _loop(
    settings: Settings, neo4j: Neo4jAdapters, redis: RedisAdapters, breaker: Breaker
) -> Recommendations:
    """Recommendation ids and the counters per ranker version: the relations, the
    suggestions and the impressions count what users do with a recommendation through it."""
    return Recommendations(
        redis.loop_counters, neo4j.ranker_models, breaker, settings.suggestions, settings.lists
    )


@dataclass(frozen=True)
class _Suggesting:
    interactions: Interactions
    suggestions: Suggestions
    impressions: Impressions
    similar: SimilarAccounts
    explainer: SuggestionExplainer


def _people_you_may_know(
    settings: Settings,
    neo4j: Neo4jAdapters,
    redis: RedisAdapters,
    breaker: Breaker,
    privacy: PrivacyRules,
    loop: Recommendations,
) -> _Suggesting:
    """People you may know: the interactions recorded (the affinities), the suggestions, and
    the impressions that sink suggestions shown too often (these two behind the one Redis
    breaker), each counting for the ranker version of the recommendation it carries; and the
    accounts similar to a seed, and the explainer of a suggestion (internal)."""
    interactions = Interactions(neo4j.suggestions, redis.interactions, settings.interactions)
    impressions = Impressions(redis.impressions, breaker, settings.suggestions, loop)
    suggestions = Suggestions(
        neo4j.suggestions,
        redis.suggestion_cache,
        redis.cold_start,
        breaker,
        settings.suggestions,
        settings.interactions,
        RankerSource(neo4j.ranker_models, neo4j.suggestions, settings.suggestions),
        impressions,
        privacy,
        loop,
    )
    similar = SimilarAccounts(neo4j.cold_start, settings.cold_start)
    explainer = SuggestionExplainer(suggestions, neo4j.suggestions, impressions)
    return _Suggesting(interactions, suggestions, impressions, similar, explainer)


def _timelines(
    settings: Settings,
    neo4j: Neo4jAdapters,
    redis: RedisAdapters,
    core: _Mirrored,
    jobs: TimelineJobs,
) -> Timelines:
    """Home timelines: the outboxes and inboxes, over the lists and their mirror, filtered by
    the reader's mutes on read."""
    return Timelines(
        redis.outboxes,
        redis.inboxes,
        core.lists,
        core.sync,
        neo4j.edges,
        jobs,
        settings.timelines,
        settings.lists,
        settings.writes,
        core.mutes,
        neo4j.moderation,
    )


@dataclass(frozen=True, slots=True)
class _Workers:
    jobs: Jobs
    relay: Relay
    flusher: InteractionFlusher
    training: RankerTraining
    consumer: TimelineEvents
    timeline_jobs: TimelineJobs
    moderation_jobs: ModerationJobs
    cold_start: ColdStartKeeper
    worker: Worker


def _workers(
    settings: Settings,
    neo4j: Neo4jAdapters,
    redis: RedisAdapters,
    core: _Mirrored,
    jobs: Jobs,
    access: KeyRing,
    suggestions: Suggestions,
) -> _Workers:
    """The background work, and the worker that runs it (built in every process: a serving
    one only records work, for the workers; ``jobs`` is the process's runner of durable
    jobs)."""
    lists = core.lists
    flusher = InteractionFlusher(
        neo4j.suggestions, redis.interactions, settings.interactions, settings.bounds
    )
    moderation_jobs = _moderation_jobs(settings, neo4j, redis, core, flusher, access)
    timeline_jobs = TimelineJobs(
        redis.outboxes,
        redis.inboxes,
        redis.timeline_job_queue,
        lists,
        jobs,
        settings.timelines,
        settings.worker,
    )
    relay = _relay(settings, neo4j, redis, core)
    consumer = TimelineEvents(redis.outboxes, redis.inboxes, redis.stream, settings.timelines)
    training = RankerTraining(
        neo4j.ranker_models, neo4j.suggestions, suggestions, redis.leases, settings.suggestions
    )
    cold_start = ColdStartKeeper(
        neo4j.cold_start, redis.cold_start, redis.stream, redis.leases, settings.cold_start
    )
    worker = Worker(
        settings.worker,
        settings.redis,
        relay=relay,
        flusher=flusher,
        training=training,
        consumer=consumer,
        timeline_jobs=timeline_jobs,
        moderation_jobs=moderation_jobs,
        approvals=core.approvals,
        jobs=jobs,
        cold_start=cold_start,
        change_expiry=ChangeExpiry(neo4j.changes, redis.leases, settings.changes),
    )
    return _Workers(
        jobs, relay, flusher, training, consumer, timeline_jobs, moderation_jobs, cold_start, worker
    )


def _moderation_jobs(
    settings: Settings,
    neo4j: Neo4jAdapters,
    redis: RedisAdapters,
    core: _Mirrored,
    flusher: InteractionFlusher,
    access: KeyRing,
) -> ModerationJobs:
    """Suspensions, status propagations and erasures: they touch every store a user is in."""
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
            redis.outboxes, redis.inboxes, redis.timeline_job_queue, settings.timelines
        ),
    )


def _relay(
    settings: Settings, neo4j: Neo4jAdapters, redis: RedisAdapters, core: _Mirrored
) -> Relay:
    """The outbox relay: what a lost mirror write needs repaired, the privacy settings' and
    the mutes' included."""
    return Relay(
        neo4j.outbox,
        redis.stream,
        core.sync,
        core.privacy,
        redis.suggestion_cache,
        settings.events,
        settings.mirror,
        core.mutes,
    )


@asynccontextmanager
async def open_services(
    settings: Settings, *, serve: bool = False, finish: bool = False, jobs: bool = False
) -> AsyncIterator[Services]:
    """Ready services (schema applied) for the API, the worker, scripts, notebooks and the CLI.

    ``serve``: a serving process: background jobs are left to the workers, and the write
    statements are planned before the first request (a Neo4j that has just started is slow
    to plan them, and the first writes would hold their users' locks meanwhile).
    On exit, running jobs are waited for when ``finish`` is set (the CLI), else stopped
    (their durable records let a worker resume them). ``jobs``: a process of long jobs (the
    worker, the CLI's commands): NEO4J_JOB_TIMEOUT_SECONDS for every statement, where the
    API's have NEO4J_TX_TIMEOUT_SECONDS.
    """
    async with Connections.open(settings) as connections:
        services = build(settings, connections, serve=serve, jobs=jobs)
        await services.neo4j.store.apply_schema()
        try:
            await services.timeline_events.prepare()
            await services.cold_start_lists.prepare()
        except REDIS_DOWN as exc:  # the consumers create their groups once Redis answers
            log.warning("event consumer groups not ready (%s)", exc)
        try:
            if serve:
                started = time.monotonic()
                await services.neo4j.edges.prepare()
                log.info("write statements planned in %.2f s", time.monotonic() - started)
            yield services
            if finish:
                await services.jobs.drain()
        finally:
            await services.close()
