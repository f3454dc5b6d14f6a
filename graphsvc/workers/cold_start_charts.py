"""The cold start's charts, kept by the workers: trending (the accounts that gained the most
followers in the last COLD_START_TRENDING_HOURS) and popular (the most followed), both of active,
discoverable accounts that show their counts only (``domain/trending.py``).

Two loops:

- a consumer group (COLD_START_CHARTS_CONSUMER_GROUP) on the event stream counts each follow and
  unfollow into the hourly bucket of its target, and notes the accounts whose count or state
  changed; several workers share the group, so each event is counted by one of them;
- a refresh, every COLD_START_CHARTS_REFRESH_SECONDS by one worker (whichever takes the round's
  lease, which is left to lapse: the lease is what spaces the rounds across workers), merges
  the window's buckets, checks the accounts that gained most in Neo4j with one bounded query
  over those ids only, updates the popular counts of the changed accounts (also checked by
  id), and stores both charts for the request path. While a graph load runs
  (``graph_loads.py``) the refresh is put off, round after round, until the load ended.

Repairs. Delivery is at least once: an entry is acked after it was counted, so a worker
stopped between the two counts it twice once another claims it; the extra follower sits in
one hourly bucket, which expires with the window. An event that never reached the stream, or
that came before the group existed (a flushed Redis), is missing from trending until its hour
leaves the window, and from popular until the next scan: the popular counts are rebuilt from
a scan of every user in Neo4j when they are missing and every COLD_START_POPULAR_REBUILD_HOURS (in
the worker, a long job's statement; never on a request). A restart loses nothing else: the
buckets, the changed accounts and the charts live in Redis. A suspension, an erasure or a user
turning undiscoverable or hiding its counts is an event too: the account is checked again and
leaves the charts at the next refresh; until then the request path's own filter
(suggestions/suggest_filter) leaves it out.
"""

from __future__ import annotations

import logging
import time

from graphsvc.adapters.neo4j.cold_start import ColdStartStore
from graphsvc.adapters.redis.cold_start import ColdStartCharts
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.adapters.redis.leases import Leases
from graphsvc.domain.trending import (
    changed_accounts,
    follower_gains,
    top_popular,
    top_trending,
    window,
)
from graphsvc.settings import ColdStartSettings
from graphsvc.workers.event_consumer import EventConsumer
from graphsvc.workers.graph_loads import load_running

log = logging.getLogger(__name__)

CHANGED_BATCH = 2_000  # changed accounts checked per Neo4j query
RANKED_SHARE = 3  # trending: the charts' size times this many top gainers are checked
LEASE = "cold-start-charts"


class ColdStartKeeper(EventConsumer):
    def __init__(
        self,
        store: ColdStartStore,
        charts: ColdStartCharts,
        stream: EventStream,
        leases: Leases,
        settings: ColdStartSettings,
    ) -> None:
        super().__init__(stream, settings.cold_start_charts_consumer_group)
        self._store = store
        self._charts = charts
        self._leases = leases
        self._put_off = False  # the last round was put off by a graph load (said once)
        self._settings = settings
        self.refresh_seconds = settings.cold_start_charts_refresh_seconds

    # -- counting ----------------------------------------------------------------------------

    async def apply(self, events: list[dict[str, str]]) -> None:
        """Count the followers each account gained."""
        hours = self._settings.cold_start_trending_hours
        gains = follower_gains(events, time.time_ns() // 1_000, hours)
        changed = changed_accounts(events)
        if gains or changed:
            await self._charts.count(gains, changed, keep_seconds=(hours + 1) * 3_600)

    # -- the charts ---------------------------------------------------------------------------

    async def refresh_round(self) -> bool:
        """A round of the refresh loop: refresh, unless a graph load runs (the next round
        asks again) or another worker took this interval's lease. Never more work waiting:
        the next round is an interval away."""
        if await load_running(self._leases):
            if not self._put_off:
                log.info("cold start charts' refresh put off while a graph load runs")
            self._put_off = True
            return False
        self._put_off = False
        if await self._leases.take(LEASE, self.refresh_seconds) is not None:
            await self.refresh()
        return False

    async def refresh(self) -> tuple[list[str], list[str]]:
        """Make both charts now (the popular counts scanned first when missing or due); the
        trending and popular accounts stored."""
        settings = self._settings
        kept = settings.cold_start_charts_kept
        if not await self._charts.popular_built():
            counts = await self._store.popular_scan(2 * kept)
            await self._charts.replace_popular(
                counts, settings.cold_start_popular_rebuild_hours * 3_600
            )
            log.info("popular chart rebuilt from a scan: %d accounts", len(counts))
        popular = await self._update_popular(kept)
        hours = window(time.time_ns() // 1_000, settings.cold_start_trending_hours)
        gained = await self._charts.gained(hours, RANKED_SHARE * kept)
        listable = await self._store.listable([uid for uid, _ in gained])
        trending = top_trending(gained, listable, kept)
        await self._charts.publish(trending, popular, settings.cold_start_trending_hours * 3_600)
        return trending, popular

    async def _update_popular(self, kept: int) -> list[str]:
        """The popular counts after the changed accounts are checked, a batch a query; the
        ``kept`` most followed."""
        counts = await self._charts.update_popular({}, [], 2 * kept)
        while changed := await self._charts.take_changed(CHANGED_BATCH):
            try:
                listable = await self._store.listable(changed)
            except BaseException:
                await self._charts.note_changed(changed)  # checked again next round
                raise
            followed = {uid: n for uid, n in listable.items() if n > 0}
            gone = [uid for uid in changed if uid not in followed]
            counts = await self._charts.update_popular(followed, gone, 2 * kept)
        return top_popular(counts, kept)
