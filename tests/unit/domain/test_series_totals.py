"""Series totals: the total now less the net gains after each bucket."""

from __future__ import annotations

from graphsvc.domain.series import Bucket, bucket_start, series_of

W = 10


def test_totals_end_at_the_count_now_and_step_by_each_buckets_net_gain() -> None:
    changes = {0: (5, 0), 10: (2, 3), 30: (1, 0)}
    assert series_of(5, changes, 0, 30, W) == [
        Bucket(0, 5, 0, 5),
        Bucket(10, 2, 3, 4),
        Bucket(20, 0, 0, 4),
        Bucket(30, 1, 0, 5),
    ]


def test_buckets_after_the_last_asked_for_still_move_the_totals() -> None:
    changes = {10: (4, 0), 20: (0, 1), 40: (3, 0)}
    assert [b.total for b in series_of(9, changes, 10, 20, W)] == [7, 6]


def test_a_bucket_starts_at_a_multiple_of_its_width() -> None:
    assert bucket_start(1_234, 100) == 1_200
