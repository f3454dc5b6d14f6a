"""The two stores' adapters, each built on first use over the connections: a process builds
the adapters it reaches and no other (the API never builds the bulk loader or the export)."""

from __future__ import annotations

from functools import cached_property

from graphsvc.adapters.connections import Driver
from graphsvc.adapters.neo4j.bells import BellStore
from graphsvc.adapters.neo4j.bulk import BulkStore
from graphsvc.adapters.neo4j.changes import ChangeStore
from graphsvc.adapters.neo4j.cold_start import ColdStartStore
from graphsvc.adapters.neo4j.exports import ExportStore
from graphsvc.adapters.neo4j.keys import KeyStore
from graphsvc.adapters.neo4j.list_follows import ListFollowStore
from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.neo4j.moderation import ModerationStore
from graphsvc.adapters.neo4j.moves import MoveStore
from graphsvc.adapters.neo4j.mutes import MuteStore
from graphsvc.adapters.neo4j.outbox import OutboxStore
from graphsvc.adapters.neo4j.pages import PageStore
from graphsvc.adapters.neo4j.portable import PortableStore
from graphsvc.adapters.neo4j.privacy import PrivacyStore
from graphsvc.adapters.neo4j.ranker_models import RankerModelStore
from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.neo4j.requests import RequestStore
from graphsvc.adapters.neo4j.snapshots import SnapshotStore
from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.adapters.neo4j.subscriptions import SubscriptionStore
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.auth_failures import AuthFailures
from graphsvc.adapters.redis.bell_flags import BellFlags
from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.cold_start import ColdStartCharts
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.exclusions import ExclusionCache
from graphsvc.adapters.redis.feedback_counters import FeedbackCounters
from graphsvc.adapters.redis.follow_filters import FollowFilterCache
from graphsvc.adapters.redis.imports import ImportRecords
from graphsvc.adapters.redis.impressions import ImpressionStore
from graphsvc.adapters.redis.interactions import InteractionBuffer
from graphsvc.adapters.redis.job_queue import JobQueue
from graphsvc.adapters.redis.leases import Leases
from graphsvc.adapters.redis.list_holders import ListHolders
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.mirror_builds import MirrorBuilds
from graphsvc.adapters.redis.mirror_reads import MirrorReads
from graphsvc.adapters.redis.mirror_state import MirrorState
from graphsvc.adapters.redis.multiplexed import Multiplexed
from graphsvc.adapters.redis.mutes import MuteMirror
from graphsvc.adapters.redis.notifications import NotificationStreams
from graphsvc.adapters.redis.privacy import PrivacyMirror
from graphsvc.adapters.redis.rate_limits import RateLimitStore
from graphsvc.adapters.redis.series_cache import SeriesCache
from graphsvc.adapters.redis.statuses import StatusSet
from graphsvc.adapters.redis.stream_slots import StreamSlots
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.adapters.redis.timelines import AuthorPosts, HomeTimelines
from graphsvc.settings import Neo4jSettings, Settings


class Neo4jAdapters:
    """``jobs``: every statement is a long job's (NEO4J_JOB_TIMEOUT_SECONDS); else a
    request's (NEO4J_TX_TIMEOUT_SECONDS), but for those the adapters mark as a job's."""

    def __init__(self, settings: Neo4jSettings, driver: Driver, *, jobs: bool = False) -> None:
        self.store = Neo4jStore(
            driver,
            settings.neo4j_database,
            settings.neo4j_retry_seconds,
            timeout=settings.neo4j_tx_timeout_seconds,
            job_timeout=settings.neo4j_job_timeout_seconds,
            jobs=jobs,
        )

    @cached_property
    def snapshots(self) -> SnapshotStore:
        return SnapshotStore(self.store)

    @cached_property
    def edges(self) -> EdgeStore:
        return EdgeStore(self.store, self.snapshots.clock, self.snapshots.read_counts)

    @cached_property
    def lists(self) -> ListStore:
        return ListStore(self.store)

    @cached_property
    def moves(self) -> MoveStore:
        return MoveStore(self.store)

    @cached_property
    def portable(self) -> PortableStore:
        return PortableStore(self.store)

    @cached_property
    def bells(self) -> BellStore:
        return BellStore(self.store)

    @cached_property
    def list_follows(self) -> ListFollowStore:
        return ListFollowStore(self.store)

    @cached_property
    def subscriptions(self) -> SubscriptionStore:
        return SubscriptionStore(self.store)

    @cached_property
    def pages(self) -> PageStore:
        return PageStore(self.store)

    @cached_property
    def moderation(self) -> ModerationStore:
        return ModerationStore(self.store)

    @cached_property
    def mutes(self) -> MuteStore:
        return MuteStore(self.store)

    @cached_property
    def outbox(self) -> OutboxStore:
        return OutboxStore(self.store)

    @cached_property
    def suggestions(self) -> SuggestionStore:
        return SuggestionStore(self.store)

    @cached_property
    def ranker_models(self) -> RankerModelStore:
        return RankerModelStore(self.store)

    @cached_property
    def bulk(self) -> BulkStore:
        return BulkStore(self.store)

    @cached_property
    def keys(self) -> KeyStore:
        return KeyStore(self.store)

    @cached_property
    def privacy(self) -> PrivacyStore:
        return PrivacyStore(self.store)

    @cached_property
    def requests(self) -> RequestStore:
        return RequestStore(self.store)

    @cached_property
    def cold_start(self) -> ColdStartStore:
        return ColdStartStore(self.store)

    @cached_property
    def changes(self) -> ChangeStore:
        return ChangeStore(self.store)

    @cached_property
    def exports(self) -> ExportStore:
        return ExportStore(self.store)


class RedisAdapters:
    """``split_page``: filter mirror pages in a second round trip (default: on a cluster)."""

    def __init__(
        self,
        settings: Settings,
        client: Client,
        multiplexed: Multiplexed | None = None,
        *,
        split_page: bool | None = None,
    ) -> None:
        self.client = client
        self._multiplexed = multiplexed
        self._settings = settings
        self._keys = settings.redis  # where each adapter's keys live
        self._split_page = split_page

    @cached_property
    def mirror(self) -> Mirror:
        return Mirror(self.client, self._keys, self._settings.mirror, self._multiplexed)

    @cached_property
    def statuses(self) -> StatusSet:
        return StatusSet(self.client, self._keys)

    @cached_property
    def privacy(self) -> PrivacyMirror:
        return PrivacyMirror(self.client, self._keys)

    @cached_property
    def mirror_reads(self) -> MirrorReads:
        split = self._split_page
        return MirrorReads(
            self.mirror,
            self.statuses,
            self.privacy,
            multiplexed=self._multiplexed,
            split_page=split,
        )

    @cached_property
    def mirror_builds(self) -> MirrorBuilds:
        return MirrorBuilds(self.mirror, self._settings.mirror)

    @cached_property
    def mirror_state(self) -> MirrorState:
        return MirrorState(self.mirror)

    @cached_property
    def mutes(self) -> MuteMirror:
        return MuteMirror(self.client, self.mirror)

    @cached_property
    def stream(self) -> EventStream:
        return EventStream(self.client, self._settings.events)

    @cached_property
    def stream_slots(self) -> StreamSlots:
        return StreamSlots(self.client, self._keys)

    @cached_property
    def interactions(self) -> InteractionBuffer:
        return InteractionBuffer(self.client, self._keys)

    @cached_property
    def suggestion_cache(self) -> SuggestionCache:
        return SuggestionCache(self.client, self._keys, self._settings.suggestions)

    @cached_property
    def impressions(self) -> ImpressionStore:
        s = self._settings
        return ImpressionStore(self.client, self._keys, s.suggestions, s.bounds)

    @cached_property
    def feedback_counters(self) -> FeedbackCounters:
        return FeedbackCounters(self.client, self._keys, self._settings.suggestions)

    @cached_property
    def rate_limits(self) -> RateLimitStore:
        return RateLimitStore(self._keys, self._settings.access, self._multiplexed)

    @cached_property
    def author_posts(self) -> AuthorPosts:
        s = self._settings
        return AuthorPosts(self.client, self.mirror, self.statuses, self._keys, s.timelines)

    @cached_property
    def home_timelines(self) -> HomeTimelines:
        return HomeTimelines(self.client, self.mirror, self._keys, self._settings.timelines)

    @cached_property
    def list_holders(self) -> ListHolders:
        return ListHolders(self.client, self.mirror)

    @cached_property
    def exclusion_cache(self) -> ExclusionCache:
        keep = self._settings.timelines.timeline_cache_seconds
        return ExclusionCache(self.client, self.mirror, keep)

    @cached_property
    def follow_filter_cache(self) -> FollowFilterCache:
        keep = self._settings.timelines.timeline_cache_seconds
        return FollowFilterCache(self.client, self.mirror, keep)

    @cached_property
    def timeline_job_queue(self) -> JobQueue:
        return JobQueue(self.client, self._keys)

    @cached_property
    def bell_job_queue(self) -> JobQueue:
        return JobQueue(self.client, self._keys, "bell")

    @cached_property
    def import_job_queue(self) -> JobQueue:
        return JobQueue(self.client, self._keys, "import")

    @cached_property
    def import_records(self) -> ImportRecords:
        keep = int(self._settings.portable.import_keep_days * 86_400)
        return ImportRecords(self.client, self.mirror, keep)

    @cached_property
    def bell_flags(self) -> BellFlags:
        return BellFlags(self.client, self.mirror)

    @cached_property
    def notification_streams(self) -> NotificationStreams:
        keep = self._settings.notifications.notifications_max
        return NotificationStreams(self.client, self.mirror, keep)

    @cached_property
    def leases(self) -> Leases:
        return Leases(self.client, self._keys)

    @cached_property
    def auth_failures(self) -> AuthFailures:
        return AuthFailures(self.client, self._keys, self._settings.access)

    @cached_property
    def cold_start(self) -> ColdStartCharts:
        return ColdStartCharts(self.client, self._keys)

    @cached_property
    def series(self) -> SeriesCache:
        return SeriesCache(self.client, self._keys, self._settings.changes)
