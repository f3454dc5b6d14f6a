"""What an operations command builds: the core (whose jobs the command runs itself), the
operators' door to the stores and the mirror's check; the rest only when a command reaches
for it (the timelines' check, the keys, the background work a command runs once)."""

from __future__ import annotations

from functools import cached_property
from typing import Protocol

from graphsvc.builders.access import build_key_ring
from graphsvc.builders.background import Background, build_background
from graphsvc.builders.core import Core
from graphsvc.builders.maintenance import build_maintenance
from graphsvc.builders.suggestions import build_suggesting
from graphsvc.builders.timelines import build_timeline_jobs, build_timelines
from graphsvc.services.access import KeyRing
from graphsvc.services.consistency import Consistency
from graphsvc.services.maintenance import Maintenance
from graphsvc.services.suggestions import Suggestions
from graphsvc.services.timeline_check import TimelineCheck
from graphsvc.services.timelines import Timelines
from graphsvc.settings import Settings
from graphsvc.workers.timeline_jobs import TimelineJobs


class Operated(Protocol):
    """What the operations tooling (``ops/``) reads of the parts it is handed, whichever
    process built them: a command's ``Operations`` or a script's whole ``Services``."""

    @property
    def settings(self) -> Settings: ...

    @property
    def core(self) -> Core: ...

    @property
    def maintenance(self) -> Maintenance: ...

    @property
    def consistency(self) -> Consistency: ...

    @property
    def background(self) -> Background: ...


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


class Operations:
    """An operations command's parts; ``Operated`` for the tooling it hands them to."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings
        self.maintenance = build_maintenance(core)
        self.consistency = build_consistency(core)

    @cached_property
    def timeline_jobs(self) -> TimelineJobs:
        return build_timeline_jobs(self.core)

    @cached_property
    def timeline_check(self) -> TimelineCheck:
        return build_timeline_check(self.core, build_timelines(self.core, self.timeline_jobs))

    @cached_property
    def access(self) -> KeyRing:
        return build_key_ring(self.core)

    @cached_property
    def suggestions(self) -> Suggestions:
        return build_suggesting(self.core).suggestions

    @cached_property
    def background(self) -> Background:
        return build_background(self.core, self.timeline_jobs, self.access, self.suggestions)
