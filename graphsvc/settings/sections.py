"""What every knob of graphsvc is: its environment variable, default, bounds and description.

Names are the plain environment variable names (``NEO4J_URI``, ``HOT_LIST_CAP``...), matched
case-insensitively. The settings are read in sections, one class per concern
(``Neo4jSettings``, ``MirrorSettings``...), and each adapter, service and worker is handed only
the sections it reads, so its constructor says what it depends on. ``Settings`` holds every
section: the composition root builds the parts from it, and the CLI, tests and notebooks use
the same object. ``LocalServerSettings`` holds what only the operations tooling needs to run
local servers and the evaluation's own servers.

This module is the one place a setting is declared. How a plain name finds its section is
``names``, and how the docs show every setting is ``reference``: neither changes when a
setting is added.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphsvc.settings.names import route, section_of, sections_of, value_of

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # graphsvc/settings/sections.py
# Settings whose values are secrets: a message about one names it, never its value.
SECRET_SETTINGS = frozenset({"neo4j_password", "cursor_secret", "api_key_secret"})


class _Section(BaseSettings):
    """One concern's settings, read from the environment by the plain variable names (no
    prefix): a part of the service is handed the section it reads and nothing else, so what a
    class depends on shows in its constructor."""

    # a refused value is left out of the error's text (it may be a secret); a name no section
    # declares is refused rather than dropped
    model_config = SettingsConfigDict(
        env_file=None, extra="forbid", frozen=True, hide_input_in_errors=True
    )


class Neo4jSettings(_Section):
    """Neo4j, the source of truth for FOLLOWS edges: where it is, how to talk to it, how long
    a statement may run."""

    neo4j_uri: str = Field(
        default="bolt://127.0.0.1:17687",
        description="Neo4j's address: bolt:// for one server, neo4j:// for a cluster (reads "
        "routed to secondaries, writes to the leader)",
    )
    neo4j_user: str = Field(default="neo4j", description="Neo4j user")
    neo4j_password: str = Field(
        default="graphsvc-dev",
        description="Neo4j password (the local server is created with it); set it in production",
    )
    neo4j_database: str = Field(default="neo4j", description="the database holding the graph")
    neo4j_pool_size: int = Field(
        default=64, ge=1, description="connections the driver keeps to Neo4j per process"
    )
    neo4j_retry_seconds: float = Field(
        default=10.0,
        ge=0,
        description="how long a write is retried (deadlocks, an unreachable server)",
    )
    neo4j_connect_timeout: float = Field(default=3.0, gt=0, description="seconds to connect")
    neo4j_tx_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=600,
        description="transaction timeout of every statement the API runs (reads and writes): "
        "Neo4j cuts off a statement still running after this long, and the request is a 503 "
        "graph_timeout, so no request makes the graph work without end",
    )
    neo4j_job_timeout_seconds: float = Field(
        default=900.0,
        gt=0,
        description="transaction timeout of long jobs' statements: the workers' and the "
        "CLI's (bulk imports, reconciles and rebuilds, training reads, a status propagation's "
        "walk of every follower, the schema and index waits at start-up)",
    )


class RedisSettings(_Section):
    """Redis, which holds the mirror of hot lists and exact counts, the caches, leases,
    budgets and streams: where it is, how to talk to it, the prefix of every key."""

    redis_url: str = Field(
        default="redis://127.0.0.1:16379/0",
        description="Redis's address (with REDIS_CLUSTER, any one node of the cluster)",
    )
    redis_pool_size: int = Field(
        default=64,
        ge=1,
        description="connections to Redis per process (on a cluster, callers at once per process)",
    )
    redis_pool_timeout: float = Field(
        default=5.0, gt=0, description="seconds to wait for a free connection when all are busy"
    )
    redis_prefix: str = Field(
        default="gs:",
        pattern=r"^[A-Za-z0-9_.:-]{1,16}$",
        description="prefix of the service's Redis keys (mirror, caches, leases, budgets); the "
        "event stream is named by EVENTS_STREAM",
    )
    redis_cluster: bool = Field(
        default=False,
        description="REDIS_URL names one node of a Redis Cluster (the others are discovered)",
    )
    redis_multiplexed_connections: int = Field(
        default=2,
        ge=1,
        le=64,
        description="multiplexed connections per process for the reads every request makes "
        "(its budget, a page, counts), each carrying the commands of many requests at once; "
        "a single Redis only (a cluster's reads use the pool)",
    )
    redis_connect_timeout: float = Field(default=1.0, gt=0, description="seconds to connect")
    redis_socket_timeout: float = Field(
        default=10.0, gt=0, description="seconds to wait for a reply (a hung server fails)"
    )
    redis_retry_seconds: float = Field(
        default=1.0,
        gt=0,
        description="after a Redis connection failure, reads go straight to Neo4j (and "
        "writes skip the mirror) this long",
    )


class WriteSettings(_Section):
    """Follows, unfollows, blocks and mutes: the group commit that lets writes arriving
    together share a transaction, the anti-abuse limits a new follow is checked against, how
    many followers one request may remove, and how many users one may block or mute."""

    write_batch_window_ms: float = Field(
        default=1.0,
        ge=0,
        le=100,
        description="how long an idle batch stays open for more writes to join it",
    )
    write_batch_max: int = Field(
        default=64, ge=1, le=1_000, description="most writes in one batch (one transaction)"
    )
    write_batch_max_background: int = Field(
        default=256,
        ge=1,
        le=1_000,
        description="most writes in one batch of the service's own follows and unfollows for "
        "a user (an import's, a move's), which no request waits on",
    )
    write_batch_concurrency: int = Field(
        default=2,
        ge=1,
        le=64,
        description="batches committing at once per process; writes that close together "
        "while several are free are shared out among them, later ones wait for a free one",
    )
    max_following: int = Field(default=5_000, ge=1, description="most users one may follow")
    follows_per_day: int = Field(default=400, ge=1, description="new follows per rolling window")
    follow_window_seconds: int = Field(
        default=86_400, ge=1, description="the rolling window of FOLLOWS_PER_DAY (a day)"
    )
    follow_requests_max: int = Field(
        default=1_000,
        ge=1,
        description="most follow requests one user may have waiting for approval (each also "
        "counts against MAX_FOLLOWING)",
    )
    remove_followers_max_ids: int = Field(
        default=100, ge=1, le=1_000, description="followers one removal request may name"
    )
    max_blocks: int = Field(
        default=5_000,
        ge=1,
        description="most users one may block (a block of a user blocked already is never refused)",
    )
    max_mutes: int = Field(
        default=5_000, ge=1, description="most users one may mute (expired mutes do not count)"
    )
    mute_max_seconds: int = Field(
        default=365 * 86_400,
        ge=1,
        description="longest duration_seconds a mute may be given (a year); none: no expiry",
    )


class PageSettings(_Section):
    """What a read of relation lists answers: page sizes, the signed cursors of every paged
    list, how much one request may examine or name."""

    page_limit_default: int = Field(default=20, ge=1, description="page size when none is asked")
    page_limit_max: int = Field(default=200, ge=1, description="largest page a request may ask")
    common_scan_max: int = Field(
        default=5_000,
        ge=1,
        description="entries of the shorter list one common-followers or common-following "
        "request examines at most, for its total and again for its page: the total is exact "
        "when that list is no longer, else a lower bound (total_is_lower_bound); a page that "
        "examined this many without filling up is answered short, with a next_cursor",
    )
    relationships_max_ids: int = Field(
        default=100, ge=1, le=1_000, description="ids one relationships request may name"
    )
    familiar_max_ids: int = Field(
        default=40,
        ge=1,
        le=200,
        description="targets one familiar-followers request may name (each read against the "
        "user's followings, at most MAX_FOLLOWING)",
    )
    audience_operands_max: int = Field(
        default=8, ge=1, le=32, description="lists one audience expression may name"
    )
    audience_conjunctions_max: int = Field(
        default=8,
        ge=1,
        le=64,
        description="alternatives (conjunctions) an audience expression may expand to",
    )
    audience_scan_max: int = Field(
        default=50_000,
        ge=1,
        description="entries of its shortest list one conjunction of an audience reads at "
        "most per request: a count past it is a lower bound with an estimate, a page past it "
        "is short, with a next_cursor",
    )
    distance_edges_max: int = Field(
        default=20_000,
        ge=1,
        description="follows one distance request reads at most: a search that would read "
        "more stops and answers exact: false",
    )
    familiar_shown_max: int = Field(
        default=10, ge=1, le=100, description="familiar followers named per target at most"
    )
    celebrity_followers: int = Field(
        default=100_000, ge=1, description="followers from which /counts says celebrity"
    )
    cursor_secret: str = Field(
        default="graphsvc-dev-cursor-secret",
        min_length=16,
        description="HMAC key that makes cursors tamper-evident; set it in production",
    )


class ChangeSettings(_Section):
    """What the changes of a user's lists keep (follows made and ended since a moment), and
    the growth series read from them: how long an ended follow's tombstone stays, how far
    behind the present a read of changes stops (so a walk never passes a change still
    committing), and how long a series may be."""

    changes_retention_days: int = Field(
        default=90,
        ge=1,
        le=3_650,
        description="days an ended follow stays in the changes of both users' lists; a read "
        "of changes since an earlier moment is a 400 since_too_old",
    )
    changes_settle_seconds: float = Field(
        default=6.0,
        ge=0,
        description="a read of changes lists those at least this old: a change is stamped "
        "when its transaction starts, so one no older than NEO4J_TX_TIMEOUT_SECONDS may still "
        "commit behind a cursor already past it (keep it above that timeout)",
    )
    changes_expiry_seconds: float = Field(
        default=60.0,
        gt=0,
        description="how often the worker deletes the tombstones CHANGES_RETENTION no longer keeps",
    )
    changes_expiry_batch: int = Field(
        default=10_000, ge=1, description="tombstones deleted per transaction by that sweep"
    )
    series_buckets_max: int = Field(
        default=1_000,
        ge=1,
        le=100_000,
        description="buckets a growth series may span, from its start to now (the totals of "
        "the asked buckets are read off every later one): a longer one is a 400 "
        "invalid_time_range",
    )
    series_cache_seconds: float = Field(
        default=600.0,
        ge=0,
        description="how long the closed buckets of a series are cached in Redis (0: not "
        "cached); a follow of an erased user leaves cached buckets within this time",
    )


class MirrorSettings(_Section):
    """The shape of the Redis mirror and the work that keeps it on the graph: rebuilds of
    cold users, the journal of removals, the batches of propagations and erasures."""

    hot_list_cap: int = Field(
        default=10_000,
        ge=1,
        description="newest entries kept per list in Redis; counts stay exact past it",
    )
    mirror_journal_seconds: int = Field(
        default=600, ge=1, description="how long removals are remembered to beat late writes"
    )
    rebuild_batch_users: int = Field(
        default=500, ge=1, description="users per batch of rebuilds, repairs, loads and checks"
    )
    rebuild_concurrency: int = Field(
        default=8, ge=1, description="cold-user rebuilds running against Neo4j at once, per process"
    )
    rebuild_wait_seconds: float = Field(
        default=2.0, ge=0, description="how long a cold read waits for a rebuild slot (then 503)"
    )
    fanout_batch_edges: int = Field(
        default=500, ge=1, description="edges per transaction of status propagations and erasures"
    )


class EventSettings(_Section):
    """The event stream every committed change is appended to, the outbox relay that makes
    it at-least-once, and the Server-Sent Events of new followers
    (``GET /v1/users/{user_id}/events``): what one API key may hold open and replay."""

    events_stream: str = Field(
        default="graph:events",
        min_length=1,
        description="the Redis stream every committed change of the graph is appended to",
    )
    events_max_len: int = Field(
        default=1_000_000, ge=1, description="events kept in the stream (approximately)"
    )
    outbox_grace_seconds: float = Field(
        default=5.0, ge=0, description="age at which an outbox event not yet appended is lost"
    )
    outbox_relay_seconds: float = Field(default=1.0, gt=0, description="relay round interval")
    outbox_batch: int = Field(default=1_000, ge=1, description="outbox events per relay step")
    events_streams_per_key: int = Field(
        default=100,
        ge=1,
        description="open event streams one API key may hold across every API process; one "
        "more is a 429 stream_limit",
    )
    events_recheck_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="how often an open event stream re-checks its API key (a revoked key's "
        "streams end within this plus API_KEY_CACHE_SECONDS) and renews its slot (a slot not "
        "renewed for three times this long lapses: a stopped process frees its slots)",
    )
    events_replay_max: int = Field(
        default=1_000,
        ge=1,
        le=100_000,
        description="stream entries a reconnect reads after its Last-Event-ID, the newest "
        "first; when more came after it, the older ones are skipped and the stream opens with "
        "a gap event",
    )
    events_replay_charge_entries: int = Field(
        default=100,
        ge=1,
        description="a replay costs the key's read budget one request more per this many "
        "stream entries it read (a 429 rate_limited when the budget cannot pay)",
    )


class TimelineSettings(_Section):
    """Home timelines: pushed for ordinary authors, pulled for celebrities, merged on read."""

    timeline_celebrity_followers: int = Field(
        default=10_000,
        ge=1,
        description="followers from which an author's posts are pulled on read, not pushed",
    )
    timeline_hysteresis: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="a pulled author is pushed again below this share of "
        "TIMELINE_CELEBRITY_FOLLOWERS (no flapping at the threshold)",
    )
    timeline_author_cap: int = Field(default=1_000, ge=1, description="newest posts per author")
    timeline_reader_cap: int = Field(
        default=800, ge=1, description="newest posts per home timeline"
    )
    timeline_active_days: float = Field(
        default=14.0, gt=0, description="readers who read within this many days get pushes"
    )
    timeline_backfill_posts: int = Field(
        default=200, ge=0, description="newest posts of an author a new follower receives"
    )
    timeline_rebuild_authors: int = Field(
        default=500, ge=1, description="followed authors (newest follows first) a rebuild reads"
    )
    timeline_rebuild_posts: int = Field(
        default=100,
        ge=1,
        description="newest posts read per author when a home timeline is rebuilt",
    )
    timeline_fanout_batch: int = Field(
        default=1_000, ge=1, description="followers per fan-out step"
    )
    timeline_job_lease_seconds: float = Field(
        default=30.0,
        gt=0,
        description="a fan-out whose process stopped renewing it for this long is resumed",
    )
    timeline_cache_seconds: int = Field(
        default=300, ge=1, description="how long a reader's list of pulled authors is cached"
    )
    timeline_max_future_seconds: int = Field(
        default=300, ge=0, description="how far ahead of the server's clock a post may be dated"
    )
    timeline_tombstone_days: float = Field(
        default=30.0, gt=0, description="how long a deleted post id is remembered"
    )
    timeline_tombstones_max: int = Field(
        default=10_000,
        ge=1,
        description="deleted post ids remembered per author (in the author's key); past it "
        "the oldest deletions are forgotten first, and their ids may be published again",
    )
    timeline_consumer_group: str = Field(
        default="timelines",
        min_length=1,
        description="the event stream's consumer group that keeps home timelines on the graph",
    )

    @property
    def timeline_active_ms(self) -> int:
        """TIMELINE_ACTIVE_DAYS in milliseconds, as the timeline scripts compare read times."""
        return int(self.timeline_active_days * 86_400_000)


class NotificationSettings(_Section):
    """Bells: a follow with ``notify`` on gets a ``posted`` notification for each new post of
    the author, rung into the follower's own notification stream by a background job and read
    as Server-Sent Events (``GET /v1/users/{user_id}/notifications``)."""

    notify_fanout_batch: int = Field(
        default=1_000, ge=1, description="bell-ringers per step of a post's ringing job"
    )
    notifications_max: int = Field(
        default=1_000,
        ge=1,
        description="notifications kept per user (approximately; the oldest go first)",
    )
    notifications_poll_ms: int = Field(
        default=250,
        ge=10,
        le=10_000,
        description="how often a process reads the notification streams of the users it "
        "streams to (one pipelined read for all of them)",
    )


class PortableSettings(_Section):
    """Imports and exports of a user's follows, blocks, mutes and lists (Mastodon's CSV, or
    JSON): what one import may carry, how it runs, how long its result is kept."""

    import_max_bytes: int = Field(
        default=20 * 1_048_576,
        ge=1_024,
        description="largest import body, in bytes (Mastodon's bound); a larger one is a 413",
    )
    import_max_rows: int = Field(
        default=20_000, ge=1, description="rows one import may hold (Mastodon's bound)"
    )
    import_batch: int = Field(default=500, ge=1, description="rows per step of an import's job")
    import_keep_days: float = Field(
        default=7.0, gt=0, description="how long an import's result can be read after its last step"
    )
    account_domain: str = Field(
        default="",
        description="this service's domain in account addresses: an import takes "
        "`id@ACCOUNT_DOMAIN` as `id` and refuses other domains' accounts",
    )


class MoveSettings(_Section):
    """Account moves: the aliases a user may name, how often an account may move, and the
    pace of moving its followers."""

    aliases_max: int = Field(
        default=10, ge=1, description="accounts one user may name as also known as"
    )
    move_cooldown_days: float = Field(
        default=30.0, ge=0, description="an account that moved may move again after this long"
    )
    move_batch: int = Field(default=500, ge=1, description="followers moved per step of a move")


class SuggestionSettings(_Section):
    """Suggestions ("people you may know"): how candidates are gathered and ranked, how shown
    ones sink, what is cached."""

    suggest_intermediaries: int = Field(
        default=200, ge=1, description="followings expanded per suggestion query, closest first"
    )
    suggest_scan: int = Field(
        default=1_000, ge=1, description="edges read from each expanded following"
    )
    suggest_edges_per_intermediary: int = Field(
        default=200, ge=1, description="edges kept per co-follower, and followers read"
    )
    suggest_cofollow_items: int = Field(
        default=20, ge=0, description="least followed follows whose followers are co-followers"
    )
    suggest_cofollowers: int = Field(
        default=50, ge=0, description="most similar co-followers whose follows are candidates"
    )
    suggest_candidates: int = Field(
        default=300, ge=50, description="candidates with features passed to the ranker"
    )
    suggest_thin: int = Field(
        default=50, ge=0, description="below this many candidates, three-hop ones are added"
    )
    suggest_fresh_days: float = Field(
        default=30.0, gt=0, description="half-life of the freshness of paths and activity"
    )
    suggest_walks: int = Field(
        default=32, ge=0, le=1_000, description="random walks with restart per suggestion query"
    )
    suggest_walk_steps: int = Field(default=6, ge=1, le=50, description="steps of each walk")
    suggest_walk_fanout: int = Field(
        default=64, ge=1, le=1_000, description="follows a walk chooses among at each step"
    )
    suggest_walk_restart: float = Field(
        default=0.3, ge=0, lt=1, description="chance that a walk jumps back to the user at a step"
    )
    ranker_model_name: str = Field(
        default="default", min_length=1, description="the stored ranker the API serves"
    )
    ranker_refresh_seconds: float = Field(
        default=30.0,
        gt=0,
        description="how often an API process looks for a newly promoted ranker (or split)",
    )
    ranker_train_check_seconds: float = Field(
        default=60.0, gt=0, description="how often a worker checks whether a training is due"
    )
    ranker_train_min_edges: int = Field(
        default=1_000, ge=1, description="follow edges the graph needs before the worker trains"
    )
    ranker_train_every_seconds: float = Field(
        default=86_400.0, gt=0, description="the worker trains again after this long"
    )
    ranker_train_retry_seconds: float = Field(
        default=600.0,
        gt=0,
        description="the worker trains again after this long when the last training failed, "
        "or while no model is served",
    )
    ranker_train_growth: float = Field(
        default=0.2,
        gt=0,
        description="the worker trains again once the follow edges grew by this share since "
        "the served model (or the last attempt) was trained",
    )
    ranker_train_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="the share of the time a worker's training may keep Neo4j busy, one "
        "query at a time (it waits the rest, so what is served beside it comes first); "
        "`graphsvc ranker train` runs at full speed",
    )
    ranker_train_users: int = Field(
        default=1_000,
        ge=10,
        description="users with held-out follows a training samples; each is validated by a "
        "fit on the other half of them",
    )
    ranker_trial_share: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="the share of users a newly promoted ranker first ranks, as the challenger "
        "of what was served, before it is served to everyone (0: served to everyone at once)",
    )
    ranker_trial_seconds: float = Field(
        default=300.0,
        gt=0,
        description="how long a ranker's trial may last: then it is served unless its users "
        "followed its suggestions less",
    )
    ranker_trial_min_shown: int = Field(
        default=1_000,
        ge=1,
        description="suggestions each arm of a trial must have shown before their online "
        "precisions are compared",
    )
    ranker_validation_max_edges: int = Field(
        default=5_000_000,
        ge=0,
        description="a training reads the graph whole, to rank the exact heuristics its "
        "model must beat, up to this many follows (past it, the service's own heuristics only)",
    )
    suggest_recommendation_ttl_seconds: int = Field(
        default=7 * 86_400,
        ge=1,
        description="how long a recommendation_id counts: a follow, show or dismissal carrying "
        "an older one is still made, but not counted for the model version that ranked it",
    )
    suggest_impressions_free: int = Field(
        default=3, ge=1, description="times a suggestion is shown before it sinks at all"
    )
    suggest_impression_decay: float = Field(
        default=0.5, gt=0, le=1, description="score multiplier per show beyond the free ones"
    )
    suggest_impressions_days: float = Field(
        default=30.0,
        gt=0,
        description="how long a user's show counts are kept (refreshed by each recorded show)",
    )
    suggest_cache_seconds: int = Field(
        default=60, ge=1, description="how long a user's computed suggestions are cached"
    )

    @property
    def fresh_half_life_us(self) -> int:
        """SUGGEST_FRESH_DAYS in microseconds, as the candidate queries take it."""
        return int(self.suggest_fresh_days * 86_400 * 1_000_000)


class ColdStartSettings(_Section):
    """The cold start: the charts of trending and popular accounts the workers keep for users
    with too few candidates, and the suggestions seeded by an account the user just followed
    ("similar to")."""

    cold_start_trending_hours: int = Field(
        default=24,
        ge=1,
        le=168,
        description="trending accounts are those that gained the most followers in this many "
        "hours (hourly buckets of follows and unfollows)",
    )
    cold_start_charts_refresh_seconds: float = Field(
        default=60.0,
        gt=0,
        description="how often one worker rebuilds the trending list and updates the popular "
        "one from the accounts whose followers changed",
    )
    cold_start_charts_kept: int = Field(
        default=200, ge=10, le=1_000, description="accounts kept in each of the two charts"
    )
    cold_start_popular_rebuild_hours: float = Field(
        default=24.0,
        gt=0,
        description="how often the popular list is rebuilt from a scan of every user in Neo4j "
        "(in the worker; it repairs what lost events left out), and at once when it is missing",
    )
    cold_start_charts_consumer_group: str = Field(
        default="cold-start-charts",
        min_length=1,
        description="the event stream's consumer group that counts the followers accounts gain",
    )
    suggest_similar_followers: int = Field(
        default=50,
        ge=1,
        le=1_000,
        description="the seed's newest followers whose follows make its similar accounts",
    )
    suggest_similar_follows: int = Field(
        default=50,
        ge=1,
        le=1_000,
        description="newest follows read of each of those followers",
    )


class InteractionSettings(_Section):
    """Interactions (messages, comments, likes, visits) and the affinity they add up to,
    which orders lists and ranks suggestions."""

    interaction_weights: dict[str, float] = Field(
        default={"message": 5.0, "comment": 3.0, "like": 2.0, "profile_visit": 1.0},
        description="interaction kinds and their weights (JSON in the environment)",
    )
    affinity_half_life_days: float = Field(
        default=14.0, gt=0, description="an interaction's weight halves every this many days"
    )
    interactions_max_batch: int = Field(
        default=1_000, ge=1, le=1_000, description="interactions one request may record"
    )
    interactions_max_future_seconds: int = Field(
        default=300, ge=0, description="how far ahead of the server's clock an event may be"
    )
    interactions_flush_seconds: float = Field(
        default=1.0, gt=0, description="how often buffered interactions are written to Neo4j"
    )
    interactions_flush_entries: int = Field(
        default=50, ge=1, description="buffered batches per Neo4j transaction"
    )

    @property
    def affinity_half_life_us(self) -> int:
        """AFFINITY_HALF_LIFE_DAYS in microseconds, as the affinity queries take it."""
        return int(self.affinity_half_life_days * 86_400 * 1_000_000)

    @field_validator("interaction_weights")
    @classmethod
    def _positive_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        bad = {k: w for k, w in weights.items() if not (0 < w < float("inf"))}
        if bad or not weights:
            raise ValueError(
                f"interaction weights must be finite and above 0, got {bad or weights}"
            )
        return weights


class BoundSettings(_Section):
    """Bounds on what the writes of one API key can make Redis and Neo4j hold (shows of
    suggestions, interactions). Tombstones of deleted posts are bounded by
    TIMELINE_TOMBSTONES_MAX."""

    suggest_served_seconds: int = Field(
        default=86_400,
        ge=1,
        description="how long after a list of suggestions was computed for a user a show of "
        "one of its ids is counted; a show of an id not suggested within this time is ignored",
    )
    suggest_impressions_max: int = Field(
        default=1_000,
        ge=1,
        description="targets whose shows are kept per user; a served target past it first "
        "makes the counts of targets no longer served go, and is ignored if that frees no room",
    )
    interactions_pair_daily_max: float = Field(
        default=100.0,
        gt=0,
        description="weight one (actor, target) pair can gain per UTC day (the day the service "
        "accepted the events, not their own time); the rest of that day's weight is dropped",
    )


class AccessSettings(_Section):
    """API keys, their authentication and their per-key budgets."""

    api_key_secret: str = Field(
        default="graphsvc-dev-api-key-secret",
        min_length=16,
        description="HMAC key under which API keys are stored; set it in production",
    )
    api_key_cache_seconds: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="how long an API process trusts a key it looked up (a revoked key "
        "stops working within this time)",
    )
    api_key_stale_seconds: float = Field(
        default=60.0,
        ge=0,
        description="while Neo4j is unreachable, how long after its last read a cached key "
        "keeps working",
    )
    auth_failures_max: int = Field(
        default=30,
        ge=1,
        description="failed authentications one client address may make per "
        "AUTH_FAILURE_WINDOW_SECONDS (counted in Redis across API processes); past it, a key "
        "this process has not cached is a 429 auth_throttled before any lookup",
    )
    auth_failure_window_seconds: int = Field(
        default=60, ge=1, le=3600, description="the window of AUTH_FAILURES_MAX, in seconds"
    )
    rate_limits_enabled: bool = Field(default=True, description="per-key request budgets")
    rate_limit_reads: str = Field(
        default="6000/minute",
        description="GET requests per key, in limits' notation (100/second, 5 per 2 seconds)",
    )
    rate_limit_writes: str = Field(
        default="1200/minute", description="other requests per key (limits' notation)"
    )

    @field_validator("rate_limit_reads", "rate_limit_writes")
    @classmethod
    def _rate(cls, text: str) -> str:
        from limits import parse

        try:
            parse(text)
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a rate such as '600/minute'") from exc
        return text


class WorkerSettings(_Section):
    """The worker (`graphsvc worker`: background work, out of the serving processes)."""

    worker_jobs: int = Field(
        default=8, ge=1, description="background jobs one worker runs at once (the rest wait)"
    )
    worker_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        description="how often a worker looks for orphaned work and records the progress of "
        "its running moderation jobs",
    )
    worker_queue_max: int = Field(
        default=100_000,
        ge=1,
        description="timeline jobs queued at most; a publish or delete past it is a 503 "
        "queue_full (with Retry-After) that changes nothing",
    )
    worker_lease_seconds: float = Field(
        default=30.0,
        gt=0,
        description="a moderation job or a move whose worker stopped renewing it for this long is "
        "taken over by another worker",
    )
    worker_reconcile_seconds: float | None = Field(
        default=None,
        gt=0,
        description="when set, the workers reconcile the users written recently this often "
        "(one worker a round), as `graphsvc reconcile --every` does",
    )


class ApiSettings(_Section):
    """The API server: where `graphsvc serve` listens, with which server and how many
    processes, what it logs, what a request may carry, and development mode."""

    development: bool = Field(
        default=False,
        description="development mode: the app accepts the development secrets written in "
        "this source (API_KEY_SECRET, CURSOR_SECRET); `make run` and the tests set it, "
        "production never does",
    )
    request_body_max_bytes: int = Field(
        default=1_048_576,
        ge=1_024,
        description="largest request body accepted, in bytes; a larger one is a 413 "
        "body_too_large before anything parses it",
    )
    request_deadline_margin_seconds: float = Field(
        default=2.0,
        gt=0,
        le=600,
        description="a request's deadline is NEO4J_TX_TIMEOUT_SECONDS plus this, counted from "
        "the last byte of its body: a request still unanswered by then (a store died under it, "
        "its batch is stuck) is a 503 store_unavailable with Retry-After, its write applied or "
        "not as the next read and the change feed tell; a response once started (a stream, an "
        "export) is not cut",
    )
    api_host: str = Field(default="127.0.0.1", description="address `graphsvc serve` listens on")
    api_port: int = Field(default=8000, description="port `graphsvc serve` listens on")
    api_workers: int = Field(default=1, ge=1, description="API processes `graphsvc serve` starts")
    api_server: Literal["uvicorn", "granian"] = Field(
        default="uvicorn",
        description="the HTTP server of `graphsvc serve`: uvicorn (uvloop, httptools) or "
        "granian (the bench extra installs it)",
    )
    api_access_log: bool = Field(default=False, description="log every request (costs CPU)")
    log_json: bool = Field(
        default=False, description="one JSON log line per request, with its X-Request-ID"
    )


class ListSettings(_Section):
    """Curated lists: how many one user may own, how many members one may hold, how long a
    name and a description may be, how many members one request may add or remove. A request
    past a bound is refused (409), and changes nothing."""

    list_owner_max: int = Field(
        default=1_000, ge=1, le=100_000, description="most lists one user may own"
    )
    list_members_max: int = Field(
        default=5_000, ge=1, le=100_000, description="most members one list may hold"
    )
    list_name_max: int = Field(
        default=64, ge=1, le=1_000, description="longest list name, in characters"
    )
    list_description_max: int = Field(
        default=300, ge=0, le=10_000, description="longest list description, in characters"
    )
    list_batch_max: int = Field(
        default=100,
        ge=1,
        le=5_000,
        description="members one request may add and remove, together",
    )
    list_follows_max: int = Field(
        default=1_000, ge=1, le=100_000, description="most lists one user may follow"
    )
    list_subscriptions_max: int = Field(
        default=100,
        ge=1,
        le=10_000,
        description="most moderation lists one user may subscribe to",
    )
    list_subscription_batch: int = Field(
        default=200,
        ge=1,
        le=5_000,
        description="people a subscription's work mutes, blocks or undoes per step",
    )
    list_consumer_group: str = Field(
        default="lists",
        min_length=1,
        description="the event stream's consumer group that takes blocked members out of "
        "curate lists",
    )


class Settings(BaseModel):
    """Every section, each read from the environment unless given: what the composition root
    (``bootstrap``), the app factory and the operations tooling hold, and hand each part its
    sections from.

    ``Settings(hot_list_cap=5, neo4j_uri=...)`` takes settings by their plain names too, each
    routed to its section (whose other values still come from the environment), so tests and
    notebooks need not know where a setting lives; ``with_values`` does the same on a copy.
    It is a plain model, not itself read from the environment: its fields are sections, and a
    variable named like one (``API``, ``REDIS``) must not be taken for it."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    writes: WriteSettings = Field(default_factory=WriteSettings)
    pages: PageSettings = Field(default_factory=PageSettings)
    lists: ListSettings = Field(default_factory=ListSettings)
    changes: ChangeSettings = Field(default_factory=ChangeSettings)
    mirror: MirrorSettings = Field(default_factory=MirrorSettings)
    events: EventSettings = Field(default_factory=EventSettings)
    timelines: TimelineSettings = Field(default_factory=TimelineSettings)
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    portable: PortableSettings = Field(default_factory=PortableSettings)
    moves: MoveSettings = Field(default_factory=MoveSettings)
    suggestions: SuggestionSettings = Field(default_factory=SuggestionSettings)
    cold_start: ColdStartSettings = Field(default_factory=ColdStartSettings)
    interactions: InteractionSettings = Field(default_factory=InteractionSettings)
    bounds: BoundSettings = Field(default_factory=BoundSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)

    @model_validator(mode="before")
    @classmethod
    def _route(cls, data: Any) -> Any:
        """Plain names beside the sections, so a caller need not know where a setting lives."""
        if not isinstance(data, dict):
            return data
        return route(cls, data, elsewhere=LocalServerSettings)

    def with_values(self, **values: Any) -> Settings:
        """A copy with some settings replaced, by their plain names (``hot_list_cap=5``) or
        whole sections, validated as the environment's values are.

        ``model_copy(update=...)`` would put a plain name beside the sections, where no part
        reads it, so it takes only section names."""
        sections: dict[str, Any] = dict(self)
        return type(self)(**{**sections, **values})

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        stray = sorted(set(update or {}) - set(type(self).model_fields))
        if stray:
            raise ValueError(f"{', '.join(stray)}: not a section of Settings; use with_values()")
        return super().model_copy(update=update, deep=deep)

    def value(self, name: str) -> Any:
        """The setting of that plain name, from its section: for what names settings as the
        environment does (the OpenAPI document's marks, messages, reports)."""
        return value_of(self, name)


# Each section of Settings by its field name, and the section of each setting (by its plain,
# lowercase name), for what walks every setting.
SECTIONS = sections_of(Settings)
SECTION_OF = section_of(Settings)


class LocalServerSettings(BaseSettings):
    """The local servers that `graphsvc services up` runs (no Docker needed), and the
    throwaway servers of `graphsvc ranker eval`. Never read by the serving code."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", frozen=True)

    state_dir: Path = Field(
        default=PROJECT_ROOT / ".local",
        description="jars, data, configuration and logs of the local servers",
    )
    neo4j_version: str = Field(
        default="5.26.30", description="the Neo4j Community release fetched from Maven Central"
    )
    neo4j_heap: str = Field(default="4g", description="the local Neo4j's JVM heap")
    neo4j_pagecache: str = Field(default="4g", description="the local Neo4j's page cache")
    neo4j_start_timeout: float = Field(
        default=180.0, description="seconds to wait for a local Neo4j to answer on Bolt"
    )
    # The servers of `graphsvc ranker eval` (wiped at every run, so never the dev or bench data).
    eval_neo4j_uri: str = Field(
        default="bolt://127.0.0.1:37687",
        description="the throwaway Neo4j of `graphsvc ranker eval` (wiped at every run)",
    )
    eval_redis_url: str = Field(
        default="redis://127.0.0.1:36379/0",
        description="the throwaway Redis of `graphsvc ranker eval` (wiped at every run)",
    )
    java_home: str | None = Field(
        default=None, description="the Java 17 or 21 that runs Neo4j; unset: the java on PATH"
    )

    @field_validator("state_dir")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        # Redis resolves its log and pid files after changing into `dir`: relative paths break.
        return path.resolve()


def development_secrets(settings: Settings) -> list[str]:
    """The secrets still at their development values, which anyone can read in the source
    (so anyone could mint cursors or match keys); by environment variable name."""
    return [
        name.upper()
        for name in ("api_key_secret", "cursor_secret")
        if settings.value(name) == SECTIONS[SECTION_OF[name]].model_fields[name].default
    ]


def refuse_development_secrets(settings: Settings) -> None:
    """Outside development mode, serving with a development secret is refused (whatever
    server runs the app: `graphsvc serve`, uvicorn or gunicorn directly)."""
    names = development_secrets(settings)
    if names and not settings.api.development:
        raise DevelopmentSecrets(
            f"set {' and '.join(names)} (the development values are public), or "
            "DEVELOPMENT=1 on a development machine"
        )


class DevelopmentSecrets(ValueError):
    """The app would serve with a secret anyone can read."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


@lru_cache(maxsize=1)
def get_local_server_settings() -> LocalServerSettings:
    return LocalServerSettings()
