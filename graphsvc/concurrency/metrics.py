"""The metrics the primitives keep themselves (prometheus-client), beside the service's own
in ``services/telemetry.py``: the breaker's state and the reads it routed, and the running
background jobs."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

MIRROR_READS = Counter(
    "graphsvc_mirror_reads",
    "Reads that go through the Redis breaker, by the store that answered",
    ["source"],
)
MIRROR_HITS = MIRROR_READS.labels("redis")
MIRROR_FALLBACKS = MIRROR_READS.labels("neo4j")
BREAKER_OPEN = Gauge(
    "graphsvc_redis_breaker_open",
    "1 while reads skip Redis after a failure (REDIS_RETRY_SECONDS)",
    multiprocess_mode="livemax",
)
JOBS_RUNNING = Gauge(
    "graphsvc_jobs_running",
    "Background jobs running: timeline fan-outs, status propagations, erasures",
    multiprocess_mode="livesum",
)
