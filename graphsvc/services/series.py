"""Growth and churn series of a user's lists: per minute, hour or day, the follows gained and
lost and the total at each bucket's end (``domain.series``), for a creator's dashboard or a
data scientist's notebook, for any user, a celebrity included.

Read from the truth: the follows and the tombstones of ended follows (``cypher/history.cypher``),
so a series ends at the list's count and agrees with the changes, an erased user's follows
leave it as they leave the changes, and nothing keeps counting in the background. The closed
buckets are cached (``SeriesCache``): a read counts the changes of the buckets it has not
cached, the open one at least, so the work is the changes since the first of them.

Bounds: a series reaches back CHANGES_RETENTION_DAYS at most (the ended follows before are
forgotten) and spans at most SERIES_BUCKETS_MAX buckets from its start to now. Privacy: the
totals are the user's counts over time, so the viewer must see its counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from graphsvc.adapters.neo4j.changes import ChangeStore
from graphsvc.adapters.redis.series_cache import SeriesCache
from graphsvc.domain.changes import DAY_US
from graphsvc.domain.errors import InvalidTimeRange, SinceTooOld
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import NetworkHidden, Viewer
from graphsvc.domain.series import WIDTHS, Bucket, bucket_start, series_of
from graphsvc.domain.time_window import micros_of
from graphsvc.services.privacy import PrivacyRules
from graphsvc.settings import ChangeSettings

# The span of a series asked without a start, per bucket width.
DEFAULT_BUCKETS = {"second": 60, "minute": 60, "hour": 24 * 7, "day": 30}


@dataclass(frozen=True, slots=True)
class Series:
    bucket: str
    width: int
    buckets: list[Bucket]


class GrowthSeries:
    def __init__(
        self,
        store: ChangeStore,
        cache: SeriesCache,
        privacy: PrivacyRules,
        settings: ChangeSettings,
    ) -> None:
        self._store = store
        self._cache = cache
        self._privacy = privacy
        self._retention_us = settings.changes_retention_days * DAY_US
        self._settle_us = int(settings.changes_settle_seconds * 1_000_000)
        self._most = settings.series_buckets_max

    async def series(
        self,
        side: Side,
        user_id: str,
        bucket: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        viewer: Viewer,
    ) -> Series:
        """The buckets from the one holding ``start`` to the one holding ``end`` (default:
        now; ``start`` defaults to a minute of seconds, an hour of minutes, a week of hours
        or a month of days)."""
        validate_user_id(user_id)
        width = WIDTHS[bucket]
        now = time.time_ns() // 1000
        last = bucket_start(min(now, now if end is None else micros_of(end)), width)
        first = (
            last - (DEFAULT_BUCKETS[bucket] - 1) * width
            if start is None
            else bucket_start(micros_of(start), width)
        )
        self._check_span(first, last, now, width)
        if not await self._privacy.counts_visible(user_id, viewer):
            raise NetworkHidden(
                f"user {user_id!r} hides its counts (counts_visibility=private): its series "
                "are its counts over time"
            )
        total, changes = await self._changes(side, user_id, first, now, width)
        return Series(bucket, width, series_of(total, changes, first, last, width))

    def _check_span(self, first: int, last: int, now: int, width: int) -> None:
        if first > last:
            raise InvalidTimeRange("the series' start is after its end")
        if first < now - self._retention_us:
            days = self._retention_us // DAY_US
            raise SinceTooOld(
                f"series reach back {days} days (CHANGES_RETENTION_DAYS): start later"
            )
        span = (bucket_start(now, width) - first) // width + 1
        if span > self._most:
            raise InvalidTimeRange(
                f"a series spans at most {self._most} buckets from its start to now "
                f"(SERIES_BUCKETS_MAX); this one would span {span}: start later, or use "
                "wider buckets"
            )

    async def _changes(
        self, side: Side, user_id: str, first: int, now: int, width: int
    ) -> tuple[int, dict[int, tuple[int, int]]]:
        """The list's total now and the (gained, lost) of every bucket from ``first`` to now:
        the closed ones from the cache where it has them, the rest counted in Neo4j from the
        first one missing, and the closed ones counted put in the cache."""
        closed_before = bucket_start(now - self._settle_us, width)  # buckets that ended
        closed = list(range(first, closed_before, width))
        cached = await self._cache.get(side, user_id, width, closed)
        missing = next((start for start in closed if start not in cached), closed_before)
        total, counted = await self._store.series(side, user_id, missing, width)
        fresh = {s: counted.get(s, (0, 0)) for s in range(missing, closed_before, width)}
        await self._cache.put(side, user_id, width, fresh)
        kept = {start: found for start, found in cached.items() if start < missing}
        return total, {**kept, **counted}
