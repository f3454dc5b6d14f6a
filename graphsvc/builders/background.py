"""The background work and the worker that runs it: the outbox relay (what a lost mirror
write needs repaired), the interaction flusher, the ranker's training, the timeline event
consumer and jobs, the moderation jobs, follow-request approvals, the cold start's charts and
the expiry of old changes, and the list consumer (blocked members out of curate lists)."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.builders.core import Core
from graphsvc.builders.lists import build_subscription_sync
from graphsvc.builders.moderation import build_moderation_jobs
from graphsvc.services.access import KeyRing
from graphsvc.services.suggestions import Suggestions
from graphsvc.workers.bell_jobs import BellJobs
from graphsvc.workers.change_expiry import ChangeExpiry
from graphsvc.workers.cold_start_charts import ColdStartKeeper
from graphsvc.workers.import_jobs import ImportJobs
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.list_events import ListEvents
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.move_jobs import MoveJobs
from graphsvc.workers.ranker.training import RankerTraining
from graphsvc.workers.ranker.trial import RankerTrial
from graphsvc.workers.relay import Relay
from graphsvc.workers.timeline_events import TimelineEvents
from graphsvc.workers.timeline_jobs import TimelineJobs
from graphsvc.workers.worker import Worker


@dataclass(frozen=True, slots=True)
class Background:
    relay: Relay
    interaction_flusher: InteractionFlusher
    ranker_training: RankerTraining
    timeline_events: TimelineEvents
    list_events: ListEvents
    moderation_jobs: ModerationJobs
    cold_start_charts: ColdStartKeeper
    worker: Worker


def build_background(
    core: Core,
    fanouts: tuple[TimelineJobs, BellJobs, ImportJobs, MoveJobs],
    access: KeyRing,
    suggestions: Suggestions,
) -> Background:
    """The worker's loops; ``fanouts``: the job kinds a serving process records too."""
    settings, neo4j, redis = core.settings, core.neo4j, core.redis
    flusher = InteractionFlusher(
        neo4j.suggestions, redis.interactions, settings.interactions, settings.bounds
    )
    moderation_jobs = build_moderation_jobs(core, flusher, access)
    relay = Relay(
        neo4j.outbox,
        redis.stream,
        core.mirror_sync,
        core.privacy,
        redis.suggestion_cache,
        settings.events,
        settings.mirror,
        core.mutes,
    )
    consumer = TimelineEvents(
        redis.author_posts, redis.home_timelines, redis.stream, settings.timelines
    )
    list_events = ListEvents(neo4j.lists, redis.stream, settings.lists)
    trial = RankerTrial(neo4j.ranker_models, redis.feedback_counters, settings.suggestions)
    training = RankerTraining(
        neo4j.ranker_models,
        neo4j.suggestions,
        suggestions,
        redis.leases,
        settings.suggestions,
        trial,
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
        list_events=list_events,
        timeline_jobs=fanouts[0],
        bell_jobs=fanouts[1],
        import_jobs=fanouts[2],
        move_jobs=fanouts[3],
        moderation_jobs=moderation_jobs,
        approvals=core.approvals,
        subscription_sync=build_subscription_sync(core),
        jobs=core.jobs,
        cold_start=cold_start,
        change_expiry=ChangeExpiry(neo4j.changes, redis.leases, settings.changes),
    )
    return Background(
        relay, flusher, training, consumer, list_events, moderation_jobs, cold_start, worker
    )
