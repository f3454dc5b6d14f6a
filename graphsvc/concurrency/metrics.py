"""The metrics the primitives keep themselves (prometheus-client), beside the service's own
in ``services/telemetry.py``: the breaker's state and the reads it routed, the running
background jobs, and where a batch of edge writes spends its time (its steps, its size, its
deadlock victims), which the adapters that run those steps keep too."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

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

WRITE_BATCH_SECONDS = Histogram(
    "graphsvc_write_batch_seconds",
    "Time of each step of a batch of edge writes (group commit): the wait for its users' "
    "in-process locks, its Neo4j transaction, its mirror round trip",
    ["step"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0),
)
BATCH_LOCKS = WRITE_BATCH_SECONDS.labels("locks")
BATCH_NEO4J = WRITE_BATCH_SECONDS.labels("neo4j")
BATCH_MIRROR = WRITE_BATCH_SECONDS.labels("mirror")
WRITE_BATCH_WRITES = Histogram(
    "graphsvc_write_batch_writes",
    "Writes per batch of edge writes (group commit)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
DEADLOCK_VICTIMS = Counter(
    "graphsvc_deadlock_victims",
    "Transactions Neo4j rolled back as a deadlock's victim, each run again",
)
