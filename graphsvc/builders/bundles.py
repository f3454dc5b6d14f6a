"""What each process holds, in one place: the API's ``Serving``, the worker's ``Working``, an
operations command's ``Operations``, and ``Services`` (both processes over one core, for
scripts, tests, notebooks and the evaluations).

Each bundle is made from the same small pieces (``_Shared``: the core, the key ring, people
you may know, the timeline job kind), so ``build`` is ``Serving`` and ``Working`` over one
core, not their wiring written out again. The builders do no I/O: ``bootstrap`` opens the
connections and hands them in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from graphsvc.adapters.connections import Connections
from graphsvc.builders.access import build_key_ring, build_rate_limits
from graphsvc.builders.background import Background, build_background
from graphsvc.builders.checks import build_consistency, build_timeline_check
from graphsvc.builders.core import Core, build_core
from graphsvc.builders.graph_reads import GraphReads, build_graph_reads
from graphsvc.builders.lists import build_list_follows, build_list_subscriptions, build_lists
from graphsvc.builders.maintenance import build_maintenance
from graphsvc.builders.moderation import build_moderation
from graphsvc.builders.moves import build_move_jobs, build_moves
from graphsvc.builders.notifications import build_bell_jobs, build_notifications
from graphsvc.builders.portable import build_exports, build_import_jobs, build_imports
from graphsvc.builders.serving import build_follower_events, build_health
from graphsvc.builders.suggestions import Suggesting, build_suggesting
from graphsvc.builders.timelines import build_timeline_jobs, build_timelines
from graphsvc.concurrency.jobs import JobKind, Recorded
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.services.access import KeyRing
from graphsvc.services.audiences import Audiences
from graphsvc.services.changes import Changes
from graphsvc.services.consistency import Consistency
from graphsvc.services.distance import Distances
from graphsvc.services.follow_pages import FollowPages
from graphsvc.services.follow_requests import FollowRequests
from graphsvc.services.follower_events import FollowerEvents
from graphsvc.services.graph_pages import GraphPages
from graphsvc.services.health import Gauges, Health
from graphsvc.services.impressions import Impressions
from graphsvc.services.interactions import Interactions
from graphsvc.services.lists.curated import Lists
from graphsvc.services.lists.follows import ListFollows
from graphsvc.services.lists.subscriptions import ListSubscriptions
from graphsvc.services.maintenance import Maintenance
from graphsvc.services.moderation import Moderation
from graphsvc.services.moves import Moves
from graphsvc.services.mutes import Mutes
from graphsvc.services.notifications import Notifications
from graphsvc.services.portable.exports import Exports
from graphsvc.services.portable.imports import Imports
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.rate_limits import RateLimits
from graphsvc.services.relations import Relations
from graphsvc.services.series import GrowthSeries
from graphsvc.services.similar import SimilarAccounts
from graphsvc.services.suggestion_explainer import SuggestionExplainer
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.suggestions import Suggestions
from graphsvc.services.timeline_check import TimelineCheck
from graphsvc.services.timelines import Timelines
from graphsvc.settings import Settings
from graphsvc.workers.bell_jobs import BellJobs
from graphsvc.workers.import_jobs import ImportJobs
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.move_jobs import MoveJobs
from graphsvc.workers.timeline_jobs import TimelineJobs


def _fields_of(parts: object, cls: type) -> dict[str, Any]:
    """The parts a bundle holds, by name, as ``cls`` declares them (a subclass's own extra
    fields left out), to build a larger bundle from them."""
    return {f.name: getattr(parts, f.name) for f in dataclasses.fields(cls)}


@dataclass(frozen=True, slots=True)
class Serving:
    """The API's parts. Routes take the one service they call (``api/http/context.py``)."""

    settings: Settings
    core: Core
    relations: Relations
    follow_requests: FollowRequests
    mutes: Mutes
    privacy: PrivacyRules
    follow_pages: FollowPages
    graph_pages: GraphPages
    changes: Changes
    growth_series: GrowthSeries
    distances: Distances
    audiences: Audiences
    moderation: Moderation
    interactions: Interactions
    suggestions: Suggestions
    similar: SimilarAccounts
    suggestion_explainer: SuggestionExplainer
    impressions: Impressions
    feedback: SuggestionFeedback
    follower_events: FollowerEvents
    notifications: Notifications
    exports: Exports
    imports: Imports
    moves: Moves
    health: Health
    gauges: Gauges
    access: KeyRing
    rate_limits: RateLimits
    timelines: Timelines
    lists: Lists
    list_follows: ListFollows
    list_subscriptions: ListSubscriptions
    plans: tuple[WarmUp, ...]  # Neo4j's plans this process needs before its first request

    async def prepare(self) -> None:
        """Make ``plans`` before the first request: a Neo4j that has just started is slow to
        plan, the first writes would hold their users' locks meanwhile, and the first
        suggestions could outlast their timeout."""
        for plans in self.plans:
            await plans.first()

    async def close(self) -> None:
        """Stop what runs in the background (a worker resumes the unfinished jobs)."""
        await self.follower_events.close()
        await self.notifications.close()
        await self.core.jobs.close()


@dataclass(frozen=True, slots=True)
class Working:
    """The worker process: the background work, over the core it repairs and records in."""

    core: Core
    background: Background
    consistency: Consistency


@dataclass(frozen=True, slots=True)
class Services(Serving):
    """Both processes' parts over one core, with the operators' door to the stores and the
    checks of the mirror and the timelines. A part is reached where it lives: ``core``,
    ``background``, or the routes' services by name."""

    background: Background
    maintenance: Maintenance
    consistency: Consistency
    timeline_check: TimelineCheck


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


class Operations:
    """An operations command's parts: the core (whose jobs the command runs itself), the
    operators' door to the stores and the mirror's check; the rest only when a command
    reaches for it (the timelines' check, the keys, the background work a command runs
    once)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings
        self.maintenance = build_maintenance(core)
        self.consistency = build_consistency(core)

    @cached_property
    def timeline_jobs(self) -> TimelineJobs:
        return build_timeline_jobs(self.core)

    @cached_property
    def bell_jobs(self) -> BellJobs:
        return build_bell_jobs(self.core)

    @cached_property
    def import_jobs(self) -> ImportJobs:
        return build_import_jobs(self.core)

    @cached_property
    def move_jobs(self) -> MoveJobs:
        return build_move_jobs(self.core)

    @cached_property
    def timeline_check(self) -> TimelineCheck:
        timelines = build_timelines(self.core, self.timeline_jobs, self.bell_jobs)
        return build_timeline_check(self.core, timelines)

    @cached_property
    def access(self) -> KeyRing:
        return build_key_ring(self.core)

    @cached_property
    def suggestions(self) -> Suggestions:
        return build_suggesting(self.core).suggestions

    @cached_property
    def background(self) -> Background:
        fanouts = (self.timeline_jobs, self.bell_jobs, self.import_jobs, self.move_jobs)
        return build_background(self.core, fanouts, self.access, self.suggestions)


@dataclass(frozen=True, slots=True)
class _Shared:
    """What the serving and the working parts of one process share."""

    core: Core
    access: KeyRing
    suggesting: Suggesting
    timeline_jobs: TimelineJobs
    bell_jobs: BellJobs
    import_jobs: ImportJobs
    move_jobs: MoveJobs

    @classmethod
    def over(cls, core: Core) -> _Shared:
        return cls(
            core,
            build_key_ring(core),
            build_suggesting(core),
            build_timeline_jobs(core),
            build_bell_jobs(core),
            build_import_jobs(core),
            build_move_jobs(core),
        )


def _serving(shared: _Shared, moderation_jobs: JobKind) -> Serving:
    """The routes' services; ``moderation_jobs`` runs them (a worker's) or records them (an
    API's)."""
    core, suggesting = shared.core, shared.suggesting
    rate_limits = build_rate_limits(core)
    plans = (core.plans, suggesting.plans)
    health, gauges = build_health(core, suggesting.suggestions.ranker, plans)
    graph = build_graph_reads(core)
    return Serving(
        settings=core.settings,
        core=core,
        relations=core.relations,
        follow_requests=core.follow_requests,
        mutes=core.mutes,
        privacy=core.privacy,
        follow_pages=core.follow_pages,
        **_fields_of(graph, GraphReads),
        moderation=build_moderation(core, moderation_jobs, shared.access),
        interactions=suggesting.interactions,
        suggestions=suggesting.suggestions,
        similar=suggesting.similar,
        suggestion_explainer=suggesting.explainer,
        impressions=suggesting.impressions,
        feedback=core.feedback,
        follower_events=build_follower_events(core, shared.access, rate_limits),
        notifications=build_notifications(core, shared.access, rate_limits),
        exports=build_exports(core),
        imports=build_imports(core, shared.import_jobs),
        moves=build_moves(core, shared.move_jobs),
        health=health,
        gauges=gauges,
        access=shared.access,
        rate_limits=rate_limits,
        timelines=build_timelines(core, shared.timeline_jobs, shared.bell_jobs),
        lists=build_lists(core),
        list_follows=build_list_follows(core),
        list_subscriptions=build_list_subscriptions(core),
        plans=plans,
    )


def _working(shared: _Shared) -> Working:
    core = shared.core
    fanouts = (shared.timeline_jobs, shared.bell_jobs, shared.import_jobs, shared.move_jobs)
    background = build_background(core, fanouts, shared.access, shared.suggesting.suggestions)
    return Working(core, background, build_consistency(core))


def build_serving(settings: Settings, connections: Connections) -> Serving:
    """The API's: it records background work for the workers and builds none of their loops,
    nor the job kinds it only records."""
    shared = _Shared.over(build_core(settings, connections, serve=True))
    return _serving(shared, Recorded(ModerationJobs.name))


def build_working(settings: Settings, connections: Connections) -> Working:
    return _working(_Shared.over(build_core(settings, connections, jobs=True)))


def build_operations(settings: Settings, connections: Connections) -> Operations:
    """An operations command's: long jobs, so NEO4J_JOB_TIMEOUT_SECONDS for every statement."""
    return Operations(build_core(settings, connections, jobs=True))


def build(
    settings: Settings,
    connections: Connections,
    *,
    split_page: bool | None = None,
    jobs: bool = False,
) -> Services:
    """The worker's parts and the API's over one core, the API's moderation running its jobs
    here. ``jobs``: a process of long jobs, whose Neo4j statements have
    NEO4J_JOB_TIMEOUT_SECONDS each."""
    shared = _Shared.over(build_core(settings, connections, jobs=jobs, split_page=split_page))
    working = _working(shared)
    serving = _serving(shared, working.background.moderation_jobs)
    return Services(
        **_fields_of(serving, Serving),
        background=working.background,
        maintenance=build_maintenance(shared.core),
        consistency=working.consistency,
        timeline_check=build_timeline_check(shared.core, serving.timelines),
    )
