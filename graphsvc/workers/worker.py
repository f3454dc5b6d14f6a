"""The worker: every background loop and job of graphsvc, in a process of its own
(``graphsvc worker``), so the serving processes spend their event loop on requests.

What it runs, each loop asking its store for work every WORKER_POLL_SECONDS or sooner:

- the outbox relay (committed graph events to the event stream, lost mirror writes repaired);
- the interaction flusher (buffered interactions into Neo4j's affinities);
- the ranker's training (``ranker/training.py``: a new suggestion model fitted on the served
  graph when one is due, checked every RANKER_TRAIN_CHECK_SECONDS, promoted only when better);
- the timelines' event consumer (follows, unfollows, blocks and erasures applied to home timelines);
- the lists' event consumer (``list_events.py``: blocked members out of curate lists);
- the expiry of ended follows past their retention (``workers/change_expiry.py``);
- the cold start's charts: a consumer counting the followers accounts gain, and the refresh of
  the trending and popular charts (``workers/cold_start_charts.py``);
- the durable jobs (``concurrency/jobs.py``): timeline fan-outs, pushes, removals and drains,
  queued in Redis, and moderation jobs, status propagations and erasures, and the work of
  subscriptions to moderation lists (``subscription_sync.py``), marked in Neo4j.
  They are claimed as soon as a serving process queues a timeline job (a wake-up list in
  Redis), and at least every WORKER_POLL_SECONDS (marks, and jobs a stopped worker left).

Several workers may run at once and no job runs twice: the relay, the flusher, the training
and the charts' refresh take their rounds under leases of their own, each consumer is one of a
Redis consumer group, and
a job is run only by the worker holding its lease (``adapters/redis/leases.py``). A worker
that dies stops renewing what it holds; another takes it over once the lease runs out, from
the job's durable record. A loop that ends while the worker runs (it should not: a failed
round is retried) is logged as an error and started again, after a wait that grows while it
keeps ending (``concurrency/loops.keep_running``): a worker never goes on without one of its
loops. A worker runs at most WORKER_JOBS jobs at once and claims no more
than it has room for, so a burst of work waits in its store, not in memory. A running job's
progress is noted beside its lease every WORKER_POLL_SECONDS, for ``GET .../status`` in any
process.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from graphsvc.concurrency.jobs import JobKind, Jobs
from graphsvc.concurrency.loops import Loop, keep_running, supervise
from graphsvc.settings import RedisSettings, WorkerSettings
from graphsvc.workers.change_expiry import ChangeExpiry
from graphsvc.workers.cold_start_charts import ColdStartKeeper
from graphsvc.workers.interaction_flusher import InteractionFlusher
from graphsvc.workers.list_events import ListEvents
from graphsvc.workers.moderation_jobs import ModerationJobs
from graphsvc.workers.ranker.training import RankerTraining
from graphsvc.workers.relay import Relay
from graphsvc.workers.timeline_events import LINGER_SECONDS, TimelineEvents
from graphsvc.workers.timeline_jobs import TimelineJobs


class Worker:
    def __init__(
        self,
        settings: WorkerSettings,
        redis: RedisSettings,
        *,
        relay: Relay,
        flusher: InteractionFlusher,
        training: RankerTraining,
        consumer: TimelineEvents,
        list_events: ListEvents,
        timeline_jobs: TimelineJobs,
        bell_jobs: JobKind,
        import_jobs: JobKind,
        move_jobs: JobKind,
        moderation_jobs: ModerationJobs,
        approvals: JobKind,
        subscription_sync: JobKind,
        jobs: Jobs,
        cold_start: ColdStartKeeper,
        change_expiry: ChangeExpiry,
    ) -> None:
        self._relay = relay
        self._flusher = flusher
        self._training = training
        self._consumer = consumer
        self._list_events = list_events
        self._timeline_jobs = timeline_jobs
        self._bell_jobs = bell_jobs
        self._import_jobs = import_jobs
        self._move_jobs = move_jobs
        self._moderation_jobs = moderation_jobs
        self._approvals = approvals
        self._subscription_sync = subscription_sync
        self._jobs = jobs
        self._cold_start = cold_start
        self._change_expiry = change_expiry
        self._poll_seconds = settings.worker_poll_seconds
        # a blocking wait shorter than the connection's read timeout
        self._wait_seconds = min(settings.worker_poll_seconds, redis.redis_socket_timeout / 2)

    async def run(self, beside: Mapping[str, Loop] | None = None) -> None:
        """Run every loop (and ``beside``: the caller's own) until cancelled, each started
        again if it ends meanwhile; cancelled, stop them (work resumes elsewhere)."""
        loops: dict[str, Loop] = {
            "relay": partial(supervise, "relay", self._relay.round, self._relay.round_seconds),
            "interactions": partial(
                supervise, "flusher", self._flusher.flush, self._flusher.round_seconds
            ),
            "ranker-training": partial(
                supervise, "ranker training", self._training.round, self._training.round_seconds
            ),
            "timeline-consumer": partial(
                supervise,
                "timeline consumer",
                self._consumer.round,
                LINGER_SECONDS,
                retry_seconds=1.0,
            ),
            "list-consumer": partial(
                supervise, "list consumer", self._list_events.round, 0.5, retry_seconds=1.0
            ),
            "cold-start-charts-consumer": partial(
                supervise,
                "cold start charts consumer",
                self._cold_start.round,
                0.5,
                retry_seconds=1.0,
            ),
            "cold-start-charts": partial(
                supervise, "cold start charts", self._cold_start.refresh_round, self._poll_seconds
            ),
            "changes-expiry": partial(
                supervise,
                "changes expiry",
                self._change_expiry.round,
                self._change_expiry.round_seconds,
            ),
            "jobs": partial(
                supervise,
                "job claims",
                self.claim,
                self._wait_seconds,
                self._timeline_jobs.wait,
                retry_seconds=self._poll_seconds,
            ),
        }
        await keep_running({**loops, **(beside or {})})

    async def claim(self) -> list[str]:
        """Start the due jobs of every kind this worker can lease and has room for; their
        keys. Moderation jobs are claimed first, then approvals of follow requests, then the
        work of subscriptions to moderation lists: each kind takes at most half the slots."""
        kinds = [
            self._moderation_jobs,
            self._approvals,
            self._subscription_sync,
            self._timeline_jobs,
            self._bell_jobs,
            self._import_jobs,
            self._move_jobs,
        ]
        return await self._jobs.claim(kinds)

    async def take_moderation_jobs(self) -> list[str]:
        """Start the due moderation jobs and approvals only (``graphsvc jobs``); their keys."""
        return await self._jobs.claim([self._moderation_jobs, self._approvals])
