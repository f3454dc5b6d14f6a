"""The service's own metrics, in Prometheus form (prometheus-client).

Counters are incremented where things happen; gauges that describe a state are kept as it
changes (the Redis breaker and running jobs, in ``concurrency/metrics.py``) or read when
``/metrics`` is scraped (the outbox backlog, by ``health.Gauges``; the suggestion ranker's
staleness, by ``ranker.RankerSource``, at most every RANKER_REFRESH_SECONDS). With
several API worker processes, PROMETHEUS_MULTIPROC_DIR makes prometheus-client keep each
process's values in files that a scrape sums (counters) or combines (gauges: the largest of
the live processes, or the most recent for the backlog and the ranker's staleness, which
describe the whole graph).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

COLD_REBUILDS = Counter("graphsvc_cold_rebuilds", "Cold mirrors built from Neo4j on read")
RELAY_REPAIRS = Counter(
    "graphsvc_relay_repairs", "Users whose mirror the outbox relay rebuilt after a lost write"
)
RATE_LIMIT_REFUSALS = Counter("graphsvc_rate_limit_refusals", "Requests refused with 429")
RATE_LIMIT_FAIL_OPEN = Counter(
    "graphsvc_rate_limit_fail_open", "Requests let through unmetered: the budgets were unreachable"
)
RATE_LIMIT_LOCAL = Counter(
    "graphsvc_rate_limit_local",
    "Requests metered by their API process alone: Redis refused the shared budgets",
)
AUTH_FAILURES = Counter("graphsvc_auth_failures", "Requests refused for their key", ["status"])
SUGGESTION_CACHE = Counter(
    "graphsvc_suggestion_cache", "Suggestion reads, by cache result", ["result"]
)
IMPRESSIONS_IGNORED = Counter(
    "graphsvc_impressions_ignored",
    "Shows of suggestions not counted: not served to the user, or past SUGGEST_IMPRESSIONS_MAX",
    ["reason"],
)
RECOMMENDATIONS_NOT_COUNTED = Counter(
    "graphsvc_recommendations_not_counted",
    "Follows, shows and dismissals carrying a recommendation id that no version's counter "
    "took, by reason: expired (older than SUGGEST_RECOMMENDATION_TTL_SECONDS), not_served (a "
    "target the id's answer did not serve), redis (Redis failed or was skipped after the write "
    "was made)",
    ["reason"],
)
INTERACTION_PAIRS_DROPPED = Counter(
    "graphsvc_interaction_pairs_dropped",
    "Interaction pairs (actor, target, day) a flush dropped, by reason: unknown_user, erasing, "
    "daily_cap (cut, in part or whole)",
    ["reason"],
)
SUGGESTION_CACHE_HITS = SUGGESTION_CACHE.labels("hit")
SUGGESTION_CACHE_MISSES = SUGGESTION_CACHE.labels("miss")

OUTBOX_BACKLOG = Gauge(
    "graphsvc_outbox_backlog",
    "Outbox events not yet delivered to the event stream",
    multiprocess_mode="mostrecent",
)
RANKER_MODEL_STALE = Gauge(
    "graphsvc_ranker_model_stale",
    "1 for each reason the served suggestion ranker is stale, else 0: graph_changed (the follow "
    "edges changed past RANKER_TRAIN_GROWTH since it was trained), training_failed (the last "
    "training failed), no_model (none served although the graph has RANKER_TRAIN_MIN_EDGES "
    "follows)",
    ["reason"],
    multiprocess_mode="mostrecent",
)
RANKER_MODEL_DRIFT = Gauge(
    "graphsvc_ranker_model_edges_growth",
    "How much the follow edges changed since the served suggestion ranker was trained, as a "
    "share of the edges it was trained on (0.25: a quarter more); 0 when none is served",
    multiprocess_mode="mostrecent",
)
