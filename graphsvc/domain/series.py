"""Growth and churn series: per bucket of time, the follows a list gained and lost, and its
total at the bucket's end.

A total is not kept per bucket: it is the total now less the net gains of every bucket after
the one asked for, so the series ends at the count the list has, and every total is the count
it had at that bucket's end, by the same follows and ends the changes are read from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

WIDTHS = {"second": 1_000_000, "minute": 60_000_000, "hour": 3_600_000_000, "day": 86_400_000_000}


@dataclass(frozen=True, slots=True)
class Bucket:
    start: int  # microseconds since the epoch, a multiple of the bucket's width
    gained: int
    lost: int
    total: int  # at the bucket's end (its start plus the width), or now for the open one


def bucket_start(moment: int, width: int) -> int:
    return moment - moment % width


def series_of(
    total_now: int, changes: Mapping[int, tuple[int, int]], first: int, last: int, width: int
) -> list[Bucket]:
    """The buckets from ``first`` to ``last`` (their starts), with totals at their ends.

    ``changes`` maps a bucket's start to its (gained, lost), for every bucket with a change
    from ``first`` to now: those after ``last`` too, whose net gains the earlier totals
    leave out."""
    after = sum(g - lost for start, (g, lost) in changes.items() if start > last)
    total = total_now - after
    buckets = []
    for start in range(last, first - 1, -width):
        gained, lost = changes.get(start, (0, 0))
        buckets.append(Bucket(start, gained, lost, total))
        total -= gained - lost
    buckets.reverse()
    return buckets
