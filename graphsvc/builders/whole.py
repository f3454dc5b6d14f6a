"""Both processes' parts over one core, for what is neither the API nor the worker: the CLI's
commands, tests and notebooks, with the operators' door to the stores (``maintenance``).
Besides, it names the core's adapters and the background parts, which tests reach directly."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.builders.background import Background
from graphsvc.builders.serving import Serving
from graphsvc.builders.stores import Neo4jAdapters, RedisAdapters
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.jobs import Jobs
from graphsvc.services.consistency import Consistency
from graphsvc.services.maintenance import Maintenance
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.timeline_check import TimelineCheck
from graphsvc.services.writes import Writes
from graphsvc.workers.cold_start_lists import ColdStartKeeper
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.ranker_training import RankerTraining
from graphsvc.workers.relay import Relay
from graphsvc.workers.timeline_events import TimelineEvents
from graphsvc.workers.worker import Worker


@dataclass(frozen=True, slots=True)
class Services(Serving):
    background: Background
    maintenance: Maintenance
    consistency: Consistency
    timeline_check: TimelineCheck

    @property
    def neo4j(self) -> Neo4jAdapters:
        return self.core.neo4j

    @property
    def redis(self) -> RedisAdapters:
        return self.core.redis

    @property
    def breaker(self) -> Breaker:
        return self.core.breaker

    @property
    def writes(self) -> Writes:
        return self.core.writes

    @property
    def jobs(self) -> Jobs:
        return self.core.jobs

    @property
    def mirror_sync(self) -> MirrorSync:
        return self.core.mirror_sync

    @property
    def relay(self) -> Relay:
        return self.background.relay

    @property
    def interaction_flusher(self) -> InteractionFlusher:
        return self.background.interaction_flusher

    @property
    def ranker_training(self) -> RankerTraining:
        return self.background.ranker_training

    @property
    def timeline_events(self) -> TimelineEvents:
        return self.background.timeline_events

    @property
    def cold_start_lists(self) -> ColdStartKeeper:
        return self.background.cold_start_lists

    @property
    def worker(self) -> Worker:
        return self.background.worker
